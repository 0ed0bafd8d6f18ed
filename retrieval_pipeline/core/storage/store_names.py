"""Where a run lives in the result store: its key, its run id and the names of its files.

The parts of a key and a run id become folder and file names, so each is checked on construction: no
key or run id built from user input can name a path outside the store. A file whose name is not a run
file of this store is never read as a run; one that looks like a run file but is not (`._x.parquet`
left by macOS, a `.partial-` file of an interrupted save, a hand-made copy) is reported as skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.questions import check_identifier
from retrieval_pipeline.core.scoring.results import GRADER, RUN_ID_PATTERN

COMPLETE_SUFFIX = ".parquet"
INCOMPLETE_SUFFIX = ".incomplete.parquet"
PARTIAL_PREFIX = ".partial-"
UNFINISHED_SAVE = "an unfinished save (in progress, or interrupted; `prune` removes it once older than the retention)"
FOREIGN_FILE = "not a run file of this store (a run file is named <run id>.parquet); left untouched"


def check_run_id(run_id: str) -> str:
    """Run ids become file names: only the store's own format is accepted, checked before any path is built."""
    if not isinstance(run_id, str) or not re.fullmatch(RUN_ID_PATTERN, run_id):
        raise InvalidInputError(
            f"run id {str(run_id)[:80]!r} is not a run id of this store "
            "(like 20250102T030405678901Z-0123abcd; see `retrieval-eval history`)"
        )
    return run_id


@dataclass(frozen=True, order=True)
class HistoryKey:
    set_identifier: str
    retriever_identifier: str
    grader: str = GRADER

    def __post_init__(self) -> None:
        for value, what in (
            (self.set_identifier, "set identifier"),
            (self.retriever_identifier, "retriever identifier"),
            (self.grader, "grader"),
        ):
            try:
                check_identifier(value, what)
            except ValueError as error:
                raise InvalidInputError(str(error)) from None

    @property
    def parts(self) -> str:
        return f"{self.set_identifier}/{self.retriever_identifier}/{self.grader}"


@dataclass(frozen=True)
class StoredRun:
    """A run as listed in the history: enough to sort, show and fetch it."""

    key: HistoryKey
    run_id: str
    complete: bool

    def __post_init__(self) -> None:
        check_run_id(self.run_id)

    @property
    def run_at(self) -> datetime:
        return datetime.strptime(self.run_id.split("-", 1)[0], "%Y%m%dT%H%M%S%fZ").replace(tzinfo=timezone.utc)

    @property
    def questions_name(self) -> str:
        return self.run_id + COMPLETE_SUFFIX

    @property
    def file_name(self) -> str:
        return self.run_id + (COMPLETE_SUFFIX if self.complete else INCOMPLETE_SUFFIX)


@dataclass(frozen=True)
class SkippedFile:
    """A file the store passed over; the command line prints it as one warning line, Dagster logs it."""

    path: str
    reason: str

    def __str__(self) -> str:
        """One line whatever the file is called: a line break in a name is shown escaped."""
        return f"skipped {self.path}: {self.reason}".translate({10: "\\n", 13: "\\r"})


def run_file(key: HistoryKey, name: str) -> StoredRun | None:
    """The run a summary file name stands for; None for any other name."""
    for suffix, complete in ((INCOMPLETE_SUFFIX, False), (COMPLETE_SUFFIX, True)):
        run_id = name.removesuffix(suffix)
        if name.endswith(suffix) and re.fullmatch(RUN_ID_PATTERN, run_id):
            return StoredRun(key, run_id, complete)
    return None


def foreign_reason(name: str) -> str | None:
    """Why a name in a run folder is worth a warning; None for files that are plainly someone else's
    (notes, records other tools keep beside the runs), which the store neither reads nor reports."""
    if name.startswith(PARTIAL_PREFIX):
        return UNFINISHED_SAVE
    if ".parquet" in name:
        return FOREIGN_FILE
    return None
