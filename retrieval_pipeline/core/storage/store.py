"""The Parquet result store: every run kept as plain Parquet any reader can open.

Layout under the root URI, one file per run on each side:

    summaries/<set>/<retriever>/<grader>/<run_id>.parquet             one summary row (complete run)
    summaries/<set>/<retriever>/<grader>/<run_id>.incomplete.parquet  one summary row (retriever errors)
    questions/<set>/<retriever>/<grader>/<run_id>.parquet             one row per question
    acceptances/<set>/<retriever>/<grader>/<stamp>-<run_id>.parquet    one row per `accept` (append-only)
    question_sets/<set>.parquet                                        a set's questions, as last loaded

A run becomes visible only when its summary lands, and each file is written under a temporary name
then renamed (see `store_files`), so a crash mid-write leaves the history as it was and no partial run.
The completeness mark in the summary's name lets the baseline be found without opening every past run.

A file that cannot be read (empty, truncated, foreign) never blocks its key: it is skipped and reported
once through `on_skip` (the command line prints one warning line, Dagster logs it; by default it goes
to Python logging), and the baseline is the latest complete run that reads.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any

from retrieval_pipeline.core.base.errors import StoreError, UnknownIdentifierError
from retrieval_pipeline.core.golden.questions import check_identifier
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.checks.verdicts import RegressionReport
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.traffic import WeightedFigures
from retrieval_pipeline.core.storage.run_schema import upgraded
from retrieval_pipeline.core.storage.run_tables import incomplete_summary, question_set_table, question_table, summary_table
from retrieval_pipeline.core.storage.store_files import (
    UnreadableFile,
    checked_summary,
    discard,
    file_system,
    footer_problem,
    probe_writable,
    read_table,
    summary_row,
    write_table,
)
from retrieval_pipeline.core.storage.store_location import ACCEPTANCES_SIDE, StoreLocation, is_local
from retrieval_pipeline.core.storage.store_names import (
    COMPLETE_SUFFIX,
    PARTIAL_PREFIX,
    HistoryKey,
    SkippedFile,
    StoredRun,
    check_run_id,
    foreign_reason,
    run_file,
)
from retrieval_pipeline.core.storage.stored_runs import run_from_tables, run_value_table

__all__ = ["HistoryKey", "ResultStore", "SkippedFile", "StoredRun"]

LOG = logging.getLogger(__name__)


def log_skipped(skipped: SkippedFile) -> None:
    """The default channel: callers that show warnings themselves (the command line, Dagster) pass theirs."""
    LOG.warning("%s", skipped)


class ResultStore:
    """The one object through which runs, acceptances, question sets and retention reach their files, so
    every side shows paths (`location`) and reports a skipped file (once per store object) the same way."""

    def __init__(self, uri: str, on_skip: Callable[[SkippedFile], None] | None = None):
        self.uri = uri
        self.fs, root = file_system(uri, is_local(uri))
        self.location = StoreLocation(uri, root)
        self._on_skip = on_skip or log_skipped
        self._reported: set[str] = set()

    def run_files(self, stored: StoredRun) -> tuple[str, str]:
        return self.location.run_files(stored)

    def questions_uri(self, stored: StoredRun) -> str:
        return self.shown(self.run_files(stored)[1])

    def summary_uri(self, stored: StoredRun) -> str:
        return self.shown(self.run_files(stored)[0])

    def shown(self, path: str) -> str:
        return self.location.shown(path)

    def skip(self, path: str, reason: str) -> None:
        """Report a file passed over, once per store object however often it is met."""
        if path not in self._reported:
            self._reported.add(path)
            self._on_skip(SkippedFile(self.shown(path), reason))

    def entries(self, side: str, key: HistoryKey) -> list:
        """The files and folders in the key's folder on `side` (summaries, questions); none before its first run."""
        return self._listing(self.location.folder(side, key))

    def keys(self) -> list[HistoryKey]:
        from pyarrow.fs import FileType

        folders = [(f"{self.location.root}/summaries", ())]
        for _ in ("set", "retriever", "grader"):
            folders = [
                (entry.path, (*parts, entry.base_name))
                for folder, parts in folders
                for entry in self._listing(folder)
                if entry.type == FileType.Directory
            ]
        keys = []
        for path, parts in folders:
            try:
                keys.append(HistoryKey(*parts))
            except ValueError:
                self.skip(path, "not a folder of this store (its name is not an identifier); left untouched")
        return sorted(keys)

    def history(self, key: HistoryKey) -> list[StoredRun]:
        """The runs named in the key's folder, newest first; other Parquet-like names are reported as
        skipped. Whether each run can be read is learnt when it is read (see `summaries`, `baseline`)."""
        from pyarrow.fs import FileType

        runs = []
        for entry in self.entries("summaries", key):
            stored = run_file(key, entry.base_name) if entry.type == FileType.File else None
            reason = foreign_reason(entry.base_name) if entry.type == FileType.File else None
            if stored is not None:
                runs.append(stored)
            elif reason is not None:
                self.skip(entry.path, reason)
        return sorted(runs, key=lambda run: run.run_id, reverse=True)

    def saved_since(self, key: HistoryKey, since: datetime) -> list[StoredRun]:
        """The runs a command saved after it started at `since`, newest first: what an interrupted or
        finished command left in the store for that pair."""
        return [run for run in self.history(key) if run.run_at >= since]

    def baseline(self, key: HistoryKey, run_id: str | None = None) -> RunResult | None:
        """The most recent readable complete run, or the complete run `run_id` when a baseline is pinned
        (so a re-run of a failed gate still compares with the run before the regression). An incomplete
        run is never a baseline; an unreadable one is skipped, unless it is the pinned one."""
        if run_id is not None:
            check_run_id(run_id)
        complete = [run for run in self.history(key) if run.complete]
        if run_id is None:
            return self.first_readable(complete)
        pinned = next((run for run in complete if run.run_id == run_id), None)
        if pinned is None:
            raise UnknownIdentifierError(f"complete run of {key.parts}", run_id, [run.run_id for run in complete])
        return self.load(pinned)

    def first_readable(self, runs: Iterable[StoredRun]) -> RunResult | None:
        """The first of `runs` that loads whole; unreadable ones before it are reported and skipped."""
        loaded = self._readable(runs, lambda stored: self._built(stored, run_from_tables))
        return next((run for _, run in loaded), None)

    def load(self, stored: StoredRun) -> RunResult:
        return self._read(lambda: self._built(stored, run_from_tables))

    def latest_run_table(self, key: HistoryKey):
        """The key's latest readable run, complete or not, as a pyarrow.Table with one row per question
        (see `run_value_table`), or None before its first run. Reads the two files `save` wrote, nothing else."""
        built = self._readable(self.history(key), lambda stored: self._built(stored, run_value_table))
        return next((table for _, table in built), None)

    def summaries(self, runs: Iterable[StoredRun]) -> Iterator[tuple[StoredRun, dict]]:
        """Each readable run with its one summary row, in order; listing a long history never opens the
        per-question files. Unreadable summaries are skipped and reported."""
        return ((stored, upgraded(summary_row(table))) for stored, table in self._readable(runs, self._summary_table))

    def read_summary(self, stored: StoredRun) -> dict:
        """The one summary row of a run; a StoreError naming the file when it cannot be read."""
        return self._read(lambda: upgraded(summary_row(self._summary_table(stored))))

    def question_file_problem(self, stored: StoredRun) -> str | None:
        """Why the run's question file cannot be parsed (reported as skipped); None when it parses or is absent."""
        path = self.run_files(stored)[1]
        problem = footer_problem(self.fs, path)
        if problem is not None:
            self.skip(path, problem)
        return problem

    def acceptance_tables(self, key: HistoryKey) -> list:
        """Every readable acceptance file of the key, oldest first; an unreadable one is reported and skipped."""
        folder = self.location.folder(ACCEPTANCES_SIDE, key)
        names = sorted(entry.base_name for entry in self._listing(folder) if entry.base_name.endswith(COMPLETE_SUFFIX))
        tables = []
        for name in names:
            if name.startswith(PARTIAL_PREFIX):
                continue
            try:
                tables.append(read_table(self.fs, f"{folder}/{name}"))
            except UnreadableFile as error:
                self.skip(error.path, error.reason)
        return tables

    def stored_question_set(self, set_identifier: str):
        """The table `save_question_set` wrote (a pyarrow.Table), or None before the set was ever saved."""
        from pyarrow.fs import FileType

        path = self.location.question_set_file(check_identifier(set_identifier, "set identifier"))
        if self.fs.get_file_info(path).type == FileType.NotFound:
            return None
        return self._read(lambda: read_table(self.fs, path))

    def save(
        self,
        run: RunResult,
        report: RegressionReport | None = None,
        tolerances: Tolerances | None = None,
        weighted: WeightedFigures | None = None,
    ) -> StoredRun:
        """Questions first, summary last (with `report`, what the run's check found, under `tolerances`, and
        the traffic-`weighted` figures): the run appears whole or not at all. A failed save takes back the question file it already wrote, so a
        full disk leaves nothing behind."""
        key = HistoryKey(run.set_identifier, run.retriever_identifier, run.grader)
        stored = StoredRun(key, run.run_id, run.complete)
        summary, questions = self.run_files(stored)
        self._write(questions, question_table(run))
        try:
            self._write(summary, summary_table(run, report, tolerances, weighted))
        except BaseException:  # a full disk, or an interrupt (Ctrl-C) between the two files
            discard(self.fs, questions)
            raise
        return stored

    def mark_incomplete(self, stored: StoredRun, reason: str) -> StoredRun:
        """The complete run `stored` kept for inspection as incomplete, never again a baseline, with
        `reason` as its verdict's sentence: a run saved by a command interrupted before the run was
        recorded elsewhere (Dagster). Its incomplete summary lands before the complete one goes."""
        demoted = StoredRun(stored.key, stored.run_id, complete=False)
        self._write(self.run_files(demoted)[0], incomplete_summary(self._summary_table(stored), reason))
        self.delete(self.run_files(stored)[0])
        return demoted

    def check_readable(self) -> None:
        """A StoreError when the store's root is a file: read, it would hold no run, and whatever reads
        verdicts there would find every pair "not evaluated"."""
        from pyarrow.fs import FileType

        if self.fs.get_file_info(self.location.root).type == FileType.File:
            raise StoreError(f"the result store {self.uri} is a file, not a folder: name the store's folder")

    def check_writable(self) -> None:
        """A StoreError unless a run could be saved here now: asked before any retriever is built or asked,
        because an evaluation whose save then fails has thrown its work away (an hour, on a slow service)."""
        probe_writable(self.fs, self.location.local, self.location.root, self.uri)

    def save_acceptance(self, key: HistoryKey, name: str, table) -> None:
        """A new file each time, never a rewrite: acceptances are an append-only record."""
        self._write(f"{self.location.folder(ACCEPTANCES_SIDE, key)}/{name}{COMPLETE_SUFFIX}", table)

    def save_question_set(self, question_set) -> str:
        """A set's questions as Parquet beside the runs (for the Dagster UI and ad-hoc readers); its URI."""
        path = self.location.question_set_file(question_set.identifier)
        self._write(path, question_set_table(question_set))
        return self.shown(path)

    def delete(self, path: str) -> None:
        """A file already gone (a concurrent prune) is not an error."""
        try:
            self.fs.delete_file(path)
        except FileNotFoundError:
            return
        except OSError as error:
            raise StoreError(f"cannot remove {self.shown(path)}: {error}") from None

    def _write(self, path: str, table) -> None:
        write_table(self.fs, self.location.local, path, table, self.shown(path))

    def _read(self, read: Callable[[], Any]):
        """`read()`, with a file that cannot be read as one StoreError naming it."""
        try:
            return read()
        except UnreadableFile as error:
            raise StoreError(f"cannot read {self.shown(error.path)}: {error.reason}") from None

    def _readable(self, runs: Iterable[StoredRun], read: Callable) -> Iterator[tuple[StoredRun, Any]]:
        """`read(run)` of each of `runs`, in order; a run with a file that cannot be read is reported and skipped."""
        for stored in runs:
            try:
                yield stored, read(stored)
            except UnreadableFile as error:
                self.skip(error.path, error.reason)

    def _summary_table(self, stored: StoredRun):
        path = self.run_files(stored)[0]
        return checked_summary(read_table(self.fs, path), stored, path)

    def _built(self, stored: StoredRun, build: Callable):
        """`build(summary table, question table)` of a run; a question file that does not fit is unreadable."""
        summary = self._summary_table(stored)
        path = self.run_files(stored)[1]
        try:
            return build(summary, read_table(self.fs, path))
        except (KeyError, TypeError, ValueError) as error:
            raise UnreadableFile(
                path, f"not the question file of run {stored.run_id} ({type(error).__name__}: {error})"
            ) from None

    def _listing(self, folder: str) -> list:
        """The files and folders directly in `folder`; none when it does not exist yet."""
        from pyarrow.fs import FileSelector

        try:
            return self.fs.get_file_info(FileSelector(folder, allow_not_found=True))
        except OSError as error:
            raise StoreError(f"cannot read the result store {self.uri!r}: {error}") from None
