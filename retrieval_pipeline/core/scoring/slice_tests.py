"""Paired tests per slice: overall, every form and every hard class, at top-1 and top-3, Holm-corrected.

A drop inside one class is what a team most wants to see, and what is most easily noise: a class of 11
questions moves 9 points per question. Testing every slice at once would make some slice "significant"
by chance alone, so the p-values are corrected together (Holm) over the whole family of one comparison,
and a difference is said to survive only when its corrected p-value is at or below the level.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
from retrieval_pipeline.core.scoring.significance import discordant_pairs, holm_adjusted, mcnemar_exact_p

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


Pair = tuple[QuestionResult, QuestionResult]


def paired_slice_tests(first: RunResult, second: RunResult, cutoffs: Sequence[int] = TESTED_CUTOFFS) -> tuple[SliceTest, ...]:
    """One family: overall, then forms, then hard classes (first-seen order in the second run), each at
    every cut-off; only questions both runs hold are paired, slices follow the second run's labels."""
    before = {q.question_id: q for q in first.questions}
    pairs = [(before[q.question_id], q) for q in second.questions if q.question_id in before]
    slices = [(OVERALL, "all", pairs), *_slices("form", pairs, lambda q: q.form), *_slices("hard_class", pairs, lambda q: q.hard_class)]
    raw = [(name, key, k, group, *_tested(group, k)) for name, key, group in slices for k in cutoffs]
    corrected = holm_adjusted([p for *_, p in raw])
    return tuple(
        SliceTest(name, key, k, len(group), first_only, second_only, _delta(group, k), p, adjusted)
        for (name, key, k, group, first_only, second_only, p), adjusted in zip(raw, corrected)
    )


def overall_test(tests: Sequence[SliceTest], k: int) -> SliceTest | None:
    return next((t for t in tests if t.slice == OVERALL and t.k == k), None)


def _slices(name: str, pairs: list[Pair], label: Callable[[QuestionResult], str | None]) -> list[tuple[str, str, list[Pair]]]:
    groups: dict[str, list[Pair]] = {}
    for pair in pairs:
        key = label(pair[1])
        if key is not None:
            groups.setdefault(key, []).append(pair)
    return [(name, key, group) for key, group in groups.items()]


def _tested(group: list[Pair], k: int) -> tuple[int, int, float]:
    first_only, second_only = discordant_pairs(
        {old.question_id: old.hit_at(k) for old, _ in group}, {new.question_id: new.hit_at(k) for _, new in group}
    )
    return first_only, second_only, mcnemar_exact_p(first_only, second_only)


def _delta(group: list[Pair], k: int) -> float:
    if not group:
        return 0.0
    return sum(bool(new.hit_at(k)) - bool(old.hit_at(k)) for old, new in group) / len(group)
