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

`ResultStore` is the writing side here over its reading side (`store_reading`), which stands on where
the files are and how they are shown (`store_location`).
"""

from __future__ import annotations

from retrieval_pipeline.core.base.errors import StoreError
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.checks.verdicts import RegressionReport
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.traffic import WeightedFigures
from retrieval_pipeline.core.storage.run_tables import incomplete_summary, question_set_table, question_table, summary_table
from retrieval_pipeline.core.storage.store_files import discard, probe_writable, write_table
from retrieval_pipeline.core.storage.store_names import COMPLETE_SUFFIX, HistoryKey, SkippedFile, StoredRun
from retrieval_pipeline.core.storage.store_reading import ACCEPTANCES_SIDE, QUESTION_SETS_SIDE, StoreReader

__all__ = ["HistoryKey", "ResultStore", "SkippedFile", "StoredRun"]


class ResultStore(StoreReader):
    """The one object through which runs, acceptances, question sets and retention reach their files, so
    every side shows paths and reports skipped files the same way (see `store_location`)."""

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

    def check_writable(self) -> None:
        """A StoreError unless a run could be saved here now: asked before any retriever is built or asked,
        because an evaluation whose save then fails has thrown its work away (an hour, on a slow service)."""
        probe_writable(self.fs, self._local, self._root, self.uri)

    def save_acceptance(self, key: HistoryKey, name: str, table) -> None:
        """A new file each time, never a rewrite: acceptances are an append-only record."""
        self._write(f"{self._dir(ACCEPTANCES_SIDE, key)}/{name}{COMPLETE_SUFFIX}", table)

    def save_question_set(self, question_set) -> str:
        """A set's questions as Parquet beside the runs (for the Dagster UI and ad-hoc readers); its URI."""
        name = f"{question_set.identifier}{COMPLETE_SUFFIX}"
        self._write(f"{self._root}/{QUESTION_SETS_SIDE}/{name}", question_set_table(question_set))
        return self._uri(f"{QUESTION_SETS_SIDE}/{name}")

    def delete(self, path: str) -> None:
        """A file already gone (a concurrent prune) is not an error."""
        try:
            self.fs.delete_file(path)
        except FileNotFoundError:
            return
        except OSError as error:
            raise StoreError(f"cannot remove {self.shown(path)}: {error}") from None

    def _write(self, path: str, table) -> None:
        write_table(self.fs, self._local, path, table, self.shown(path))
