"""Where a change between two runs sits: by form, by hard class, and question by question.

A verdict is made on the overall rates, but a drop in one form can cancel a gain in another and leave
the overall rate flat; these figures go with every report so such a drop stays visible, and the flipped
questions say which ones to read first. Both runs must hold the same unchanged questions (see
`regression.detect_regression`, which restricts them before asking).
"""

from __future__ import annotations

from dataclasses import dataclass

from retrieval_pipeline.core.scoring.results import GroupRates, RunResult
from retrieval_pipeline.core.scoring.stats.slice_tests import TESTED_CUTOFFS


@dataclass(frozen=True)
class GroupDelta:
    """Deltas inside one form or hard class, so a drop that cancels out overall stays visible."""

    key: str
    questions: int
    deltas: tuple[tuple[int, float], ...]
    """(cut-off, current minus baseline hit rate) at each tested cut-off, in increasing order."""

    def delta(self, k: int) -> float:
        return dict(self.deltas)[k]


def group_deltas(current: dict[str, GroupRates], baseline: dict[str, GroupRates]) -> tuple[GroupDelta, ...]:
    """Keys of the current run in its order. Both runs hold the same unchanged questions, labels
    included, so they have the same keys: a class that disappeared went with a set edit."""
    return tuple(
        GroupDelta(
            key=key,
            questions=rates.questions,
            deltas=tuple((k, rates.hit_rate(k) - baseline[key].hit_rate(k)) for k, _ in rates.hit_counts),
        )
        for key, rates in current.items()
    )


def flipped_questions(current: RunResult, baseline: RunResult) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Questions that lost a hit at any cut-off, and questions that gained one (never both: hits nest)."""
    import numpy as np

    earlier = baseline.questions.positions
    then = np.fromiter((earlier[question_id] for question_id in current.questions.ids), np.int64, current.question_count)
    answered = current.questions.answered & baseline.questions.answered[then]
    lost = np.zeros(current.question_count, bool)
    gained = np.zeros(current.question_count, bool)
    for k in TESTED_CUTOFFS:
        was, now = baseline.questions.hits(k)[then], current.questions.hits(k)
        lost |= was & ~now
        gained |= now & ~was
    ids = current.questions.ids
    return tuple(ids[i] for i in np.flatnonzero(lost & answered)), tuple(
        ids[i] for i in np.flatnonzero(gained & ~lost & answered)
    )
