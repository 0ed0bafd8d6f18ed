"""The result store read: its keys, each key's history, runs and summaries, baselines, acceptances and
stored question sets, the reading side of `ResultStore` (`store` says the layout, and why a file that
cannot be read is skipped rather than blocking its key).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any

from retrieval_pipeline.core.base.errors import UnknownIdentifierError
from retrieval_pipeline.core.golden.questions import check_identifier
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.storage.run_schema import upgraded
from retrieval_pipeline.core.storage.store_files import UnreadableFile, footer_problem, read_table, summary_row
from retrieval_pipeline.core.storage.store_location import StoreLocation
from retrieval_pipeline.core.storage.store_names import (
    COMPLETE_SUFFIX,
    PARTIAL_PREFIX,
    HistoryKey,
    StoredRun,
    check_run_id,
    foreign_reason,
    run_file,
)
from retrieval_pipeline.core.storage.stored_runs import run_from_tables, run_value_table

QUESTION_SETS_SIDE = "question_sets"
ACCEPTANCES_SIDE = "acceptances"


class StoreReader(StoreLocation):
    """What the store holds, read without changing it: listing a long history opens summaries only."""

    def keys(self) -> list[HistoryKey]:
        from pyarrow.fs import FileType

        folders = [(f"{self._root}/summaries", ())]
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
        for entry in self._listing(self._dir("summaries", key)):
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
        try:
            return self._built(stored, run_from_tables)
        except UnreadableFile as error:
            raise self._failure(error) from None

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
        try:
            return upgraded(summary_row(self._summary_table(stored)))
        except UnreadableFile as error:
            raise self._failure(error) from None

    def question_file_problem(self, stored: StoredRun) -> str | None:
        """Why the run's question file cannot be parsed (reported as skipped); None when it parses or is absent."""
        path = self.run_files(stored)[1]
        problem = footer_problem(self.fs, path)
        if problem is not None:
            self.skip(path, problem)
        return problem

    def acceptance_tables(self, key: HistoryKey) -> list:
        """Every readable acceptance file of the key, oldest first; an unreadable one is reported and skipped."""
        folder = self._dir(ACCEPTANCES_SIDE, key)
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

        path = f"{self._root}/{QUESTION_SETS_SIDE}/{check_identifier(set_identifier, 'set identifier')}{COMPLETE_SUFFIX}"
        if self.fs.get_file_info(path).type == FileType.NotFound:
            return None
        try:
            return read_table(self.fs, path)
        except UnreadableFile as error:
            raise self._failure(error) from None

    def _readable(self, runs: Iterable[StoredRun], read: Callable) -> Iterator[tuple[StoredRun, Any]]:
        """`read(run)` of each of `runs`, in order; a run with a file that cannot be read is reported and skipped."""
        for stored in runs:
            try:
                yield stored, read(stored)
            except UnreadableFile as error:
                self.skip(error.path, error.reason)

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
