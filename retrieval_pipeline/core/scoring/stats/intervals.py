"""How far a rate can be trusted: Wilson score intervals and the smallest drop a set can detect.

On 40 questions one question is 2.5 points; without these figures a team cannot tell noise from harm,
nor know that its set is too small to see the drops it cares about.
"""

from __future__ import annotations

import math

Z_95 = 1.959963984540054
"""The two-sided 95% normal quantile."""

DEFAULT_SIGNIFICANCE = 0.05
"""The level the minimum detectable drop is stated at when `tolerances.min_significance` is unset."""


def wilson_interval(hits: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of hits / total: unlike the normal approximation it stays inside 0..1 and
    keeps a useful width at 0 or all hits, which small golden sets reach often. No questions: all of 0..1."""
    if total == 0:
        return 0.0, 1.0
    return effective_wilson_interval(hits / total, total, z, hits == 0, hits == total)


def effective_wilson_interval(
    rate: float, size: float, z: float = Z_95, none: bool | None = None, every: bool | None = None
) -> tuple[float, float]:
    """The Wilson interval of a (possibly weighted) rate over an effective sample size `size`: with
    Kish's n_eff = (sum w)^2 / sum w^2 for a weighted mean of 0/1 outcomes, and exactly the plain
    interval when every weight is equal (n_eff = n). `none` / `every`: no / every unit is a success, where
    the bound is exactly 0 / 1 (read from the rate when not given). No sample: all of 0..1."""
    if size <= 0:
        return 0.0, 1.0
    none = rate == 0 if none is None else none
    every = rate == 1 if every is None else every
    denominator = 1 + z * z / size
    centre = (rate + z * z / (2 * size)) / denominator
    half_width = z * math.sqrt(rate * (1 - rate) / size + z * z / (4 * size * size)) / denominator
    # At 0 or all hits the exact bound is 0 or 1; rounding must not leave the rate outside its own interval.
    return (0.0 if none else min(rate, centre - half_width)), (1.0 if every else max(rate, centre + half_width))


def minimum_discordant_questions(significance: float, tests: int = 1) -> int:
    """The fewest questions that must flip one way, none the other, for the exact McNemar test to reach
    `significance` after Holm's correction over `tests` tests (the smallest p-value is multiplied by
    `tests`): d = ceil(log2(2 * tests / significance)), since d one-sided flips give p = 2 * 0.5**d."""
    if not 0 < significance < 1 or tests < 1:
        raise ValueError(f"significance must lie in (0, 1) and tests be >= 1, got {significance!r}, {tests!r}")
    return max(1, math.ceil(math.log2(2 * tests / significance) - 1e-12))


def minimum_detectable_drop(questions: int, significance: float, tests: int = 1) -> float | None:
    """The smallest drop that can ever be significant on `questions` paired questions: d / questions.

    Any smaller drop cannot reach the level however the flips fall, so a tolerance below this figure
    will meet only inconclusive drops. None when the set has fewer than d questions: no drop at all can
    be told from noise.
    """
    needed = minimum_discordant_questions(significance, tests)
    return needed / questions if questions >= needed else None
