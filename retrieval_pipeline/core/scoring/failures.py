"""Why a run is incomplete, in one sentence, and the early stop of a run whose service is down.

The first questions decide whether a service is down: when the first N of them all fail to reach it, the
rest are not asked (and are counted apart from the failed), so a dead service costs seconds rather than
every question's full retries. Every incomplete run names its causes, each counted, with one answer of the
service quoted. Both the CLI and Dagster show the sentence built here.
"""

from __future__ import annotations

import threading
from collections import Counter

from retrieval_pipeline.core.retrieval.retriever import ANSWER_MARK
from retrieval_pipeline.core.scoring.results import RunResult

DEFAULT_FAIL_FAST_AFTER = 10
NOT_ASKED = "not asked, the run stopped early: "
_LISTED_IDS = 5
_LISTED_CAUSES = 3


class FailFastGate:
    """Trips when the first `after` questions to finish all failed to reach the service; any other
    outcome first (an answer, or a failure of the answer itself) disarms it for the rest of the run.

    Questions finish in any order when asked concurrently, so "first" means first to finish. Shared by
    the runner's worker threads, hence the lock.
    """

    def __init__(self, after: int):
        self._remaining = after
        self._lock = threading.Lock()
        self.cause: str | None = None

    def record(self, error: str | None, unreachable: bool) -> None:
        with self._lock:
            if self._remaining <= 0:
                return
            if not unreachable:
                self._remaining = 0
                return
            self._remaining -= 1
            if self._remaining == 0:
                self.cause = error

    def not_asked(self) -> str | None:
        """The error recorded on a question the run skipped, or None while questions are still asked."""
        return None if self.cause is None else NOT_ASKED + self.cause


def failure_summary(run: RunResult) -> str:
    """'13 of 300 questions failed (q1, ...), 287 not asked: <cause>', the causes counted when several, and
    one answer the service gave quoted: error texts differ by their answers (`ANSWER_MARK`), not their causes."""
    errors = [error for error in run.questions.values("error") if error is not None]
    if not errors:
        return f"none of {run.question_count} questions failed"
    failed = [error for error in errors if not error.startswith(NOT_ASKED)]
    skipped = len(errors) - len(failed)
    sentence = f"{len(failed)} of {run.question_count} questions failed"
    ids = [
        question_id
        for question_id, error in zip(run.questions.ids, run.questions.values("error"))
        if error and not error.startswith(NOT_ASKED)
    ]
    if len(failed) < run.question_count:
        sentence += f" ({_listed(ids)})"
    if skipped:
        sentence += f", {skipped} not asked"
    causes = Counter(_cause(error) for error in failed or [error.removeprefix(NOT_ASKED) for error in errors])
    (cause, count), *others = causes.most_common()
    if not others:
        sentence += f": {cause}"
    else:
        shown = [f"{n} × {text}" for text, n in causes.most_common(_LISTED_CAUSES)]
        more = len(causes) - _LISTED_CAUSES
        sentence += "; by cause: " + ", ".join(shown) + (f" and {more} other cause(s)" if more > 0 else "")
    answer = next((_answer(error) for error in failed if _cause(error) == cause and _answer(error)), None)
    if answer is not None:
        sentence += f"; one answer{' (' + cause + ')' if others else ''}: {answer}"
    if skipped:
        sentence += "; the run stopped early: the first questions could not reach the service"
    return sentence


def _listed(ids: list[str]) -> str:
    return ", ".join(ids[:_LISTED_IDS]) + (f" and {len(ids) - _LISTED_IDS} more" if len(ids) > _LISTED_IDS else "")


def _cause(error: str) -> str:
    return error.split(ANSWER_MARK, 1)[0]


def _answer(error: str) -> str | None:
    _, mark, answer = error.partition(ANSWER_MARK)
    return answer if mark else None
