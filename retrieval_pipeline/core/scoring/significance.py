"""Exact McNemar test: on a small set one question is several points, so tell noise from change."""

from __future__ import annotations

from collections.abc import Sequence
from math import comb
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def mcnemar_exact_p(only_first: int, only_second: int) -> float:
    """Two-sided p-value of the paired difference, from the discordant pairs alone.

    `only_first` questions hit under the first ranking and missed under the second, `only_second` the
    reverse. Under no difference each discordant pair is a fair coin, so this is a binomial test.
    """
    if only_first < 0 or only_second < 0:
        raise ValueError("discordant counts cannot be negative")
    n = only_first + only_second
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(only_first, only_second) + 1)) / 2**n
    return min(1.0, 2 * tail)


def discordant_pairs(first: np.ndarray, second: np.ndarray, answered: np.ndarray) -> tuple[int, int]:
    """Count questions hit by one side only: aligned hit arrays, over the questions both sides answered."""
    return int((first & ~second & answered).sum()), int((second & ~first & answered).sum())


def holm_adjusted(p_values: Sequence[float]) -> tuple[float, ...]:
    """Holm's step-down adjustment, in the input order: testing many slices and cut-offs at once would
    otherwise make some "significant" difference appear by chance alone. Holm controls the chance of any
    false finding and, unlike Bonferroni, costs little power when one difference is real."""
    order = sorted(range(len(p_values)), key=lambda index: p_values[index])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for position, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - position) * p_values[index]))
        adjusted[index] = running
    return tuple(adjusted)
