"""Why a run is incomplete, in one sentence, and the early stop of a run whose service is down.

A dead service used to cost every question its full retries (minutes for a few hundred questions) and
ended with a count of failures but no cause. Now the first questions decide: when the first N of them all
fail to reach the service, the rest are not asked, and every incomplete run names its most common error.
Both the CLI and Dagster show the sentence built here.
"""

from __future__ import annotations

import threading
from collections import Counter

from retrieval_pipeline.core.scoring.results import RunResult

DEFAULT_FAIL_FAST_AFTER = 10
NOT_ASKED = "not asked, the run stopped early: "
_LISTED_IDS = 5


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
    """'3 of 300 questions failed (q1, q7, q9): <most common error>', naming how many it hit when not all."""
    errors = [error for error in run.questions.values("error") if error is not None]
    if not errors:
        return f"none of {run.question_count} questions failed"
    ids = run.errored_question_ids
    listed = ", ".join(ids[:_LISTED_IDS]) + (f" and {len(ids) - _LISTED_IDS} more" if len(ids) > _LISTED_IDS else "")
    cause, count = Counter(error.removeprefix(NOT_ASKED) for error in errors).most_common(1)[0]
    sentence = f"{len(errors)} of {run.question_count} questions failed"
    sentence += "" if len(errors) == run.question_count else f" ({listed})"
    sentence += f": {cause}" if count == len(errors) else f"; the most common error ({count} of them): {cause}"
    skipped = sum(error.startswith(NOT_ASKED) for error in errors)
    if skipped:
        sentence += f"; the run stopped early, {skipped} were not asked: the first questions could not reach the service"
    return sentence
