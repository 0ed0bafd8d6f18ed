"""Paired tests per slice: overall, every form and every hard class, at top-1 and top-3, Holm-corrected.

A drop inside one class is what a team most wants to see, and what is most easily noise: a class of 11
questions moves 9 points per question. Testing every slice at once would make some slice "significant"
by chance alone, so the p-values are corrected together (Holm) over the whole family of one comparison,
and a difference is said to survive only when its corrected p-value is at or below the level.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.significance import discordant_pairs, holm_adjusted, mcnemar_exact_p

if TYPE_CHECKING:
    import numpy as np

TESTED_CUTOFFS = (1, 3)
OVERALL = "overall"


@dataclass(frozen=True)
class SliceTest:
    """The second run against the first on one slice at one cut-off (first: the reference or baseline)."""

    slice: str
    """`overall`, `form` or `hard_class`."""
    key: str
    """The form or hard class; `all` for the overall slice."""
    k: int
    questions: int
    first_only: int
    """Questions the first run hit and the second missed (errored questions left out)."""
    second_only: int
    delta: float
    """The second run's hit rate minus the first's, on this slice's questions (errors count as misses)."""
    p_value: float
    """Two-sided exact McNemar p-value, uncorrected."""
    corrected_p_value: float
    """Holm-adjusted over every test of the same comparison."""

    def survives(self, significance: float) -> bool:
        return self.corrected_p_value <= significance


def paired_slice_tests(first: RunResult, second: RunResult, cutoffs: Sequence[int] = TESTED_CUTOFFS) -> tuple[SliceTest, ...]:
    """One family: overall, then forms, then hard classes (first-seen order in the second run), each at
    every cut-off; only questions both runs hold are paired, slices follow the second run's labels."""
    import numpy as np

    earlier = first.questions.positions
    paired = [
        (position, earlier[question_id]) for position, question_id in enumerate(second.questions.ids) if question_id in earlier
    ]
    now, then = (np.array(side, np.int64) for side in zip(*paired)) if paired else (np.zeros(0, np.int64),) * 2
    answered = second.questions.answered[now] & first.questions.answered[then]
    hits = {k: (first.questions.hits(k)[then], second.questions.hits(k)[now]) for k in cutoffs}
    slices = [(OVERALL, "all", np.ones(len(now), bool)), *_slices("form", second, now), *_slices("hard_class", second, now)]
    raw = []
    for name, key, members in slices:
        for k in cutoffs:
            before, after = (side[members] for side in hits[k])
            first_only, second_only = discordant_pairs(before, after, answered[members])
            delta = (int(after.sum()) - int(before.sum())) / int(members.sum()) if members.any() else 0.0
            raw.append(
                (name, key, k, int(members.sum()), first_only, second_only, delta, mcnemar_exact_p(first_only, second_only))
            )
    corrected = holm_adjusted([p for *_, p in raw])
    return tuple(SliceTest(*test, adjusted) for test, adjusted in zip(raw, corrected))


def overall_test(tests: Sequence[SliceTest], k: int) -> SliceTest | None:
    return next((t for t in tests if t.slice == OVERALL and t.k == k), None)


def _slices(name: str, run: RunResult, paired: np.ndarray) -> list[tuple[str, str, np.ndarray]]:
    """Each label's paired questions, labels in first-seen order among the paired questions."""
    import numpy as np

    keys, codes = run.questions.groups(name)
    codes = codes[paired]
    present, first_seen = np.unique(codes[codes >= 0], return_index=True)
    return [(name, keys[code], codes == code) for code in present[np.argsort(first_seen)]]
