"""Paired tests per slice: overall and every key of each declared slice (slices.py), at top-1 and top-3,
Holm-corrected.

A drop inside one class is what a team most wants to see, and what is most easily noise: a class of 11
questions moves 9 points per question. Testing every slice at once would make some slice "significant"
by chance alone, so the p-values are corrected together (Holm) over the whole family of one comparison,
and a difference is said to survive only when its corrected p-value is at or below the level.

Every declared ranking measure both runs have (measures.py: MRR, nDCG, Recall, ...) is tested overall in
the same family, by a paired randomization test on its per-question scores, with a bootstrap interval on
its delta: McNemar needs hits and misses, a score in 0..1 needs a test of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from retrieval_pipeline.core.scoring.measures import HIT_RATE, TESTED, ranking_figures
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.slices import SLICES, Slice
from retrieval_pipeline.core.scoring.stats.significance import (
    bootstrap_interval,
    discordant_pairs,
    holm_adjusted,
    mcnemar_exact_p,
    paired_randomization_p,
)

if TYPE_CHECKING:
    import numpy as np

TESTED_CUTOFFS = tuple(figure.k for figure in TESTED)
OVERALL = "overall"


@dataclass(frozen=True)
class SliceTest:
    """The second run against the first on one slice at one cut-off (first: the reference or baseline)."""

    slice: str
    """`overall`, or a declared slice's name (`form`, `hard_class`, `turn_depth`)."""
    key: str
    """The form, hard class or turn depth; `all` for the overall slice."""
    k: int
    questions: int
    first_only: int
    """Questions the first run hit and the second missed (errored questions left out); for a ranking
    measure, the questions the first run scored higher."""
    second_only: int
    delta: float
    """The second run's figure minus the first's, on this slice's questions (errors count as misses)."""
    p_value: float
    """Two-sided, uncorrected: exact McNemar for a hit rate, paired randomization for a ranking measure."""
    corrected_p_value: float
    """Holm-adjusted over every test of the same comparison."""
    measure: str = HIT_RATE.name
    """The declared measure compared, at cut-off `k`."""
    interval: tuple[float, float] | None = None
    """The 95% bootstrap interval of `delta` (ranking measures)."""

    def survives(self, significance: float) -> bool:
        return self.corrected_p_value <= significance


def paired_slice_tests(first: RunResult, second: RunResult, cutoffs: Sequence[int] = TESTED_CUTOFFS) -> tuple[SliceTest, ...]:
    """One family: overall, then each declared slice's keys (first-seen order in the second run), each at
    every cut-off; only questions both runs hold are paired, slices follow the second run's labels."""
    import numpy as np

    earlier = first.questions.positions
    paired = [
        (position, earlier[question_id]) for position, question_id in enumerate(second.questions.ids) if question_id in earlier
    ]
    now, then = (np.array(side, np.int64) for side in zip(*paired)) if paired else (np.zeros(0, np.int64),) * 2
    answered = second.questions.answered[now] & first.questions.answered[then]
    hits = {k: (first.questions.hits(k)[then], second.questions.hits(k)[now]) for k in cutoffs}
    slices = [(OVERALL, "all", np.ones(len(now), bool)), *(part for s in SLICES for part in _slices(s, second, now))]
    raw = []
    for name, key, members in slices:
        for k in cutoffs:
            before, after = (side[members] for side in hits[k])
            first_only, second_only = discordant_pairs(before, after, answered[members])
            delta = (int(after.sum()) - int(before.sum())) / int(members.sum()) if members.any() else 0.0
            raw.append(
                (name, key, k, int(members.sum()), first_only, second_only, delta, mcnemar_exact_p(first_only, second_only))
            )
    ranking = _ranking_tests(first, second, now, then)
    corrected = holm_adjusted([p for *_, p in raw] + [test.p_value for test in ranking])
    hit_rates = tuple(SliceTest(*test, adjusted) for test, adjusted in zip(raw, corrected))
    return hit_rates + tuple(replace(test, corrected_p_value=p) for test, p in zip(ranking, corrected[len(raw) :]))


def _ranking_tests(first: RunResult, second: RunResult, now: np.ndarray, then: np.ndarray) -> list[SliceTest]:
    """Overall, each declared ranking figure both runs have that is paired-tested, on the paired questions (an errored question
    scores 0, as in the run's mean), all tested on the same sign assignments and resamples."""
    import numpy as np

    before, after = first.questions.metrics(first.cutoffs), second.questions.metrics(second.cutoffs)
    answered_before, answered_after = first.questions.answered[then], second.questions.answered[now]
    figures = [figure for figure in ranking_figures(second.cutoffs) if figure.key in before and figure.measure.paired_test]
    if not figures:
        return []
    differences = np.column_stack(
        [np.where(answered_after, after[f.key][now], 0.0) - np.where(answered_before, before[f.key][then], 0.0) for f in figures]
    )
    p_values, intervals = paired_randomization_p(differences), bootstrap_interval(differences)
    questions = len(differences)
    return [
        SliceTest(
            OVERALL,
            "all",
            figure.k,
            questions,
            int((column < 0).sum()),
            int((column > 0).sum()),
            float(column.mean()) if questions else 0.0,
            float(p_value),
            1.0,
            figure.measure.name,
            (float(low), float(high)),
        )
        for figure, column, p_value, (low, high) in zip(figures, differences.T, p_values, intervals)
    ]


def overall_test(tests: Sequence[SliceTest], k: int) -> SliceTest | None:
    """The overall hit-rate test at `k`."""
    return next((t for t in tests if t.slice == OVERALL and t.k == k and t.measure == HIT_RATE.name), None)


def _slices(declared: Slice, run: RunResult, paired: np.ndarray) -> list[tuple[str, str, np.ndarray]]:
    """Each key's paired questions, keys in first-seen order among the paired questions."""
    import numpy as np

    name = declared.name
    keys, codes = declared.groups(run.questions)
    codes = codes[paired]
    present, first_seen = np.unique(codes[codes >= 0], return_index=True)
    return [(name, keys[code], codes == code) for code in present[np.argsort(first_seen)]]
