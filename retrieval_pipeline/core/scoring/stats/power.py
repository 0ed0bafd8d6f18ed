"""How large a set must be, and how small a drop it can see: McNemar's test at a chosen power.

The minimum detectable drop (intervals.py) says what can reach significance at all; a team also needs
to know what its set will catch most of the time. For paired hits the power of McNemar's test depends
on the share of discordant questions ψ (hit by one run only) and the drop δ (the one-way excess), by
the normal approximation (Connor, 1987):

    n = (z(1 - α/2) · √ψ + z(power) · √(ψ - δ²))² / δ²

A retriever that changed nothing still flips some questions between runs (a nondeterministic index,
ties, a remote service): that flip rate f is measured from the history, split evenly both ways, and a
real drop adds δ one way, so ψ = f + δ. The exact test's floor also holds: δ · n one-way flips must be
at least the fewest that can ever be significant.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from retrieval_pipeline.core.scoring.stats.intervals import minimum_discordant_questions

POWER = 0.80
"""The chance of catching a real drop that a set is sized for: the usual choice."""
_STEPS = 60
"""Bisection steps for the smallest detectable drop: far below a tenth of a point."""


def questions_needed(drop: float, flip_rate: float, significance: float, power: float = POWER) -> int | None:
    """The fewest paired questions on which a hit-rate drop of `drop` is found at `significance` with
    chance `power`; None when no set size can (a drop of 0, or a flip rate leaving no room for it)."""
    if not 0 < significance < 1 or not 0 < power < 1 or not 0 <= flip_rate <= 1:
        raise ValueError(
            f"significance and power must lie in (0, 1), the flip rate in [0, 1]: {significance}, {power}, {flip_rate}"
        )
    discordant = flip_rate + drop
    if drop <= 0 or discordant > 1:
        return None
    normal = NormalDist()
    root = normal.inv_cdf(1 - significance / 2) * math.sqrt(discordant) + normal.inv_cdf(power) * math.sqrt(
        max(discordant - drop * drop, 0.0)
    )
    floor = minimum_discordant_questions(significance) / drop
    return math.ceil(max(root * root / (drop * drop), floor) - 1e-9)


def detectable_drop(questions: int, flip_rate: float, significance: float, power: float = POWER) -> float | None:
    """The smallest hit-rate drop `questions` paired questions catch at `significance` with chance
    `power`; None when even the largest possible drop would be missed."""
    largest = 1.0 - flip_rate

    def enough(drop: float) -> bool:
        needed = questions_needed(drop, flip_rate, significance, power)
        return needed is not None and needed <= questions

    if questions < 1 or largest <= 0 or not enough(largest):
        return None
    low, high = 0.0, largest
    for _ in range(_STEPS):
        middle = (low + high) / 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high
