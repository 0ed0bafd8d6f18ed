"""The Parquet result store (SPEC section 4): every run kept as plain Parquet any reader can open.

Layout under the root URI, one file per run on each side:

    summaries/<set>/<retriever>/<grader>/<run_id>.parquet             one summary row (complete run)
    summaries/<set>/<retriever>/<grader>/<run_id>.incomplete.parquet  one summary row (retriever errors)
    questions/<set>/<retriever>/<grader>/<run_id>.parquet             one row per question
    acceptances/<set>/<retriever>/<grader>/<stamp>-<run_id>.parquet    one row per `accept` (append-only)
    question_sets/<set>.parquet                                        a set's questions, as last loaded

A run becomes visible only when its summary lands, and each file is written under a temporary name
then renamed, so a crash mid-write leaves the history as it was and no partial run. The completeness
mark in the summary's name lets the baseline be found without opening every past run.

The store speaks Arrow's file-system API: a local folder through Arrow's own, any other URI (s3://,
gs://, memory://, ...) through fsspec wrapped for Arrow. pyarrow is loaded anyway for Parquet, so only
remote stores pay for importing fsspec (~15 MiB and 0.08 s).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from retrieval_pipeline.core.errors import StoreError, UnknownIdentifierError
from retrieval_pipeline.core.regression import RegressionReport
from retrieval_pipeline.core.results import GRADER, RunResult
from retrieval_pipeline.core.arrow_memory import release_unused
from retrieval_pipeline.core.run_tables import question_set_table, question_table, run_from_tables, run_value_table, summary_table

COMPLETE_SUFFIX = ".parquet"
INCOMPLETE_SUFFIX = ".incomplete.parquet"
PARTIAL_PREFIX = ".partial-"
QUESTION_SETS_SIDE = "question_sets"
ACCEPTANCES_SIDE = "acceptances"


@dataclass(frozen=True, order=True)
class HistoryKey:
    set_identifier: str
    retriever_identifier: str
    grader: str = GRADER

    @property
    def parts(self) -> str:
        return f"{self.set_identifier}/{self.retriever_identifier}/{self.grader}"


@dataclass(frozen=True)
class StoredRun:
    """A run as listed in the history: enough to sort, show and fetch it."""

    key: HistoryKey
    run_id: str
    complete: bool

    @property
    def run_at(self) -> datetime:
        return datetime.strptime(self.run_id.split("-", 1)[0], "%Y%m%dT%H%M%S%fZ").replace(tzinfo=timezone.utc)

    @property
    def file_name(self) -> str:
        return self.run_id + (COMPLETE_SUFFIX if self.complete else INCOMPLETE_SUFFIX)


def _stamped_before(run_id: str, cutoff: datetime) -> bool:
    try:
        return StoredRun(HistoryKey("", ""), run_id, True).run_at < cutoff
    except ValueError:  # not a file this store wrote: left alone
        return False


class ResultStore:
    def __init__(self, uri: str):
        self.uri = uri
        self._local = "://" not in uri or uri.startswith("file://")
        self.fs, self._root = _file_system(uri, self._local)

    def _dir(self, side: str, key: HistoryKey) -> str:
        return f"{self._root}/{side}/{key.parts}"

    def _uri(self, relative: str) -> str:
        """Where a stored file is, as a reader would open it: a path for a local store, else a URI."""
        return f"{self._root if self._local else self.uri.rstrip('/')}/{relative}"

    def save(self, run: RunResult, report: RegressionReport | None = None) -> StoredRun:
        """`report`: what the run's check found, kept in its summary row."""
        key = HistoryKey(run.set_identifier, run.retriever_identifier, run.grader)
        stored = StoredRun(key, run.run_id, run.complete)
        self._write(self._dir("questions", key), f"{run.run_id}{COMPLETE_SUFFIX}", question_table(run))
        self._write(self._dir("summaries", key), stored.file_name, summary_table(run, report))
        return stored

    def save_acceptance(self, key: HistoryKey, name: str, table) -> None:
        """A new file each time, never a rewrite: acceptances are an append-only record."""
        self._write(self._dir(ACCEPTANCES_SIDE, key), f"{name}{COMPLETE_SUFFIX}", table)

    def acceptance_tables(self, key: HistoryKey) -> list:
        folder = self._dir(ACCEPTANCES_SIDE, key)
        try:
            names = sorted(e.base_name for e in self._entries(folder) if e.base_name.endswith(COMPLETE_SUFFIX))
        except OSError as error:
            raise StoreError(f"cannot read the result store {self.uri!r}: {error}") from None
        return [self._read(f"{folder}/{name}") for name in names if not name.startswith(PARTIAL_PREFIX)]

    def _write(self, folder: str, name: str, table) -> None:
        import pyarrow.parquet as pq

        partial = f"{folder}/{PARTIAL_PREFIX}{name}"
        try:
            self.fs.create_dir(folder, recursive=True)
            with self.fs.open_output_stream(partial) as sink:
                pq.write_table(table, sink)
            release_unused()
            self.fs.move(partial, f"{folder}/{name}")
        except OSError as error:
            raise StoreError(f"cannot write to the result store {self.uri!r}: {error}") from None

    def save_question_set(self, question_set) -> str:
        """A set's questions as Parquet beside the runs (for the Dagster UI and ad-hoc readers); its URI."""
        name = f"{question_set.identifier}{COMPLETE_SUFFIX}"
        self._write(f"{self._root}/{QUESTION_SETS_SIDE}", name, question_set_table(question_set))
        return self._uri(f"{QUESTION_SETS_SIDE}/{name}")

    def stored_question_set(self, set_identifier: str):
        """The table `save_question_set` wrote (a pyarrow.Table), or None before the set was ever saved."""
        from pyarrow.fs import FileType

        path = f"{self._root}/{QUESTION_SETS_SIDE}/{set_identifier}{COMPLETE_SUFFIX}"
        if self.fs.get_file_info(path).type == FileType.NotFound:
            return None
        return self._read(path)

    def latest_run_table(self, key: HistoryKey):
        """The key's latest run, complete or not, as a pyarrow.Table with one row per question (see
        `run_value_table`), or None before its first run. Reads the two files `save` wrote, nothing else."""
        history = self.history(key)
        if not history:
            return None
        return run_value_table(*self._tables(history[0]))

    def questions_uri(self, stored: StoredRun) -> str:
        return self._uri(f"questions/{stored.key.parts}/{stored.run_id}{COMPLETE_SUFFIX}")

    def summary_uri(self, stored: StoredRun) -> str:
        return self._uri(f"summaries/{stored.key.parts}/{stored.file_name}")

    def history(self, key: HistoryKey) -> list[StoredRun]:
        """Newest first."""
        folder = self._dir("summaries", key)
        try:
            names = [entry.base_name for entry in self._entries(folder)]
        except OSError as error:
            raise StoreError(f"cannot read the result store {self.uri!r}: {error}") from None
        runs = [
            StoredRun(key, name.removesuffix(INCOMPLETE_SUFFIX), complete=False)
            if name.endswith(INCOMPLETE_SUFFIX)
            else StoredRun(key, name.removesuffix(COMPLETE_SUFFIX), complete=True)
            for name in names
            if name.endswith(COMPLETE_SUFFIX) and not name.startswith(PARTIAL_PREFIX)
        ]
        return sorted(runs, key=lambda run: run.run_id, reverse=True)

    def baseline(self, key: HistoryKey, run_id: str | None = None) -> RunResult | None:
        """The most recent complete run, or the complete run `run_id` when a baseline is pinned (so a
        re-run of a failed gate still compares with the run before the regression). An incomplete run
        is never a baseline."""
        complete = [run for run in self.history(key) if run.complete]
        if run_id is None:
            return self.load(complete[0]) if complete else None
        pinned = next((run for run in complete if run.run_id == run_id), None)
        if pinned is None:
            raise UnknownIdentifierError(f"complete run of {key.parts}", run_id, [run.run_id for run in complete])
        return self.load(pinned)

    def load(self, stored: StoredRun) -> RunResult:
        return run_from_tables(*self._tables(stored))

    def _tables(self, stored: StoredRun) -> tuple:
        """The run's summary table and question table, as stored."""
        return (
            self._read(f"{self._dir('summaries', stored.key)}/{stored.file_name}"),
            self._read(f"{self._dir('questions', stored.key)}/{stored.run_id}{COMPLETE_SUFFIX}"),
        )

    def read_summary(self, stored: StoredRun) -> dict:
        """The one summary row alone: listing a long history never opens the per-question files."""
        return self._read(f"{self._dir('summaries', stored.key)}/{stored.file_name}").to_pylist()[0]

    def _read(self, path: str):
        import pyarrow.parquet as pq

        try:
            with self.fs.open_input_file(path) as source:
                return pq.read_table(source)
        except OSError as error:
            raise StoreError(f"cannot read {path} from the result store {self.uri!r}: {error}") from None

    def keys(self) -> list[HistoryKey]:
        from pyarrow.fs import FileType

        folders = [f"{self._root}/summaries"]
        try:
            for _ in ("set", "retriever", "grader"):
                folders = [entry.path for folder in folders for entry in self._entries(folder) if entry.type == FileType.Directory]
        except OSError as error:
            raise StoreError(f"cannot read the result store {self.uri!r}: {error}") from None
        return sorted(HistoryKey(*folder.rstrip("/").split("/")[-3:]) for folder in folders)

    def _entries(self, folder: str) -> list:
        """The files and folders directly in `folder`; none when it does not exist yet."""
        from pyarrow.fs import FileSelector

        return self.fs.get_file_info(FileSelector(folder, allow_not_found=True))

    def prune(
        self, retention: timedelta, now: datetime | None = None, protected: Callable[[HistoryKey], str | None] | None = None
    ) -> list[StoredRun]:
        """Remove runs older than `retention`, always keeping each key's latest run, latest complete run and
        the run `protected` names (the latest accepted one, the baseline under the `accepted` policy)."""
        cutoff = (now or datetime.now(timezone.utc)) - retention
        removed = []
        for key in self.keys():
            runs = self.history(key)
            keep = {run.run_id for run in runs[:1]} | {next((r.run_id for r in runs if r.complete), None)}
            if protected is not None:
                keep.add(protected(key))
            for run in runs:
                if run.run_id not in keep and run.run_at < cutoff:
                    self._remove(run)
                    removed.append(run)
            self._remove_leftovers(key, {run.run_id for run in runs}, cutoff)
        return removed

    def _remove_leftovers(self, key: HistoryKey, listed: set[str], cutoff: datetime) -> None:
        """Files of saves that crashed (a question file without its summary, a `.partial-` file) are
        invisible already; once older than the retention they are deleted too."""
        for side in ("summaries", "questions"):
            folder = self._dir(side, key)
            for entry in self._entries(folder):
                run_id = entry.base_name.removeprefix(PARTIAL_PREFIX).split(".", 1)[0]
                orphan = entry.base_name.startswith(PARTIAL_PREFIX) or run_id not in listed
                if orphan and _stamped_before(run_id, cutoff):
                    self.fs.delete_file(entry.path)

    def _remove(self, run: StoredRun) -> None:
        """Summary first: once it is gone the run is no longer visible, whatever happens next."""
        try:
            self.fs.delete_file(f"{self._dir('summaries', run.key)}/{run.file_name}")
            self.fs.delete_file(f"{self._dir('questions', run.key)}/{run.run_id}{COMPLETE_SUFFIX}")
        except OSError as error:
            raise StoreError(f"cannot remove run {run.run_id} from the result store {self.uri!r}: {error}") from None


def _file_system(uri: str, local: bool):
    """Arrow's file system for the URI and the store's root path in it."""
    from pyarrow import fs

    if local:
        return fs.LocalFileSystem(), os.path.abspath(os.path.expanduser(uri.removeprefix("file://"))).rstrip("/")
    try:
        from fsspec.core import url_to_fs

        remote, root = url_to_fs(uri)
    except (ImportError, ValueError) as error:
        raise StoreError(f"cannot open the result store {uri!r}: {error}") from None
    return fs.PyFileSystem(fs.FSSpecHandler(remote)), root.rstrip("/")
