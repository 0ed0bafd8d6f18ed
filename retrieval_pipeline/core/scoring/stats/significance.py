"""Exact McNemar test: on a small set one question is several points, so tell noise from change."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


RESAMPLES = 10_000
"""Random sign assignments drawn per randomization test: a p-value near 0.05 is then known to about
±0.002, far finer than a small set's own noise."""
LEVEL = 0.95
"""The confidence of every bootstrap interval."""
BOOTSTRAP_RESAMPLES = 2_000
"""Resamples per bootstrap interval: enough for stable 2.5% and 97.5% percentiles, and a fifth of the
cost of the test's draws, which matters on a set of 20,000 questions checked on every run."""
SEED = 20_260_101
"""Fixed, so a comparison's p-values and intervals are the same every time it is made."""
EXACT_UP_TO = 12
"""Non-zero differences up to which every sign assignment is enumerated (2**12 = 4096) instead of sampled."""
_CHUNK = 4_000_000
"""Values drawn at once, bounding memory whatever the set's size."""


def paired_randomization_p(differences: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """Two-sided p-values of paired mean differences: `differences` holds one row per question (second
    minus first) and one column per figure. Under no difference each question's sign is a fair coin, so
    a p-value is the share of sign assignments whose mean is at least as far from zero as the observed
    one. Every figure is tested on the same assignments, and only the questions some figure scores
    differently are drawn (a zero changes no sum); exact by enumeration for a few such questions, else
    sampled with the observed assignment counted in (so no p-value is 0)."""
    import numpy as np

    differing = _differing(differences)
    if not len(differing):
        return np.ones(differing.shape[1])
    observed = np.abs(differing.sum(axis=0)) * (1 - 1e-12)  # a float hair is not a more extreme sum
    width = len(differing)
    if width <= EXACT_UP_TO:
        signs = 1 - 2 * ((np.arange(2**width)[:, None] >> np.arange(width)) & 1)
        return (np.abs(signs @ differing) >= observed).mean(axis=0)
    rng, extreme, total = np.random.default_rng(seed), np.zeros(differing.shape[1]), differing.sum(axis=0)
    for size in _chunks(resamples, _per_chunk(width)):
        # One random bit per sign, drawn a byte at a time: a signed sum is twice the kept sum less the total.
        kept = np.unpackbits(rng.integers(0, 256, (size, (width + 7) // 8), dtype=np.uint8), axis=1, count=width)
        extreme += (np.abs(2.0 * (kept @ differing) - total) >= observed).sum(axis=0)
    return (extreme + 1) / (resamples + 1)


def bootstrap_interval(
    differences: np.ndarray, level: float = LEVEL, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = SEED
) -> np.ndarray:
    """The percentile bootstrap interval of each figure's mean difference (one row per question, one
    column per figure), questions resampled with replacement, the same resamples for every figure; one
    (low, high) row per figure. A resample's means depend only on the questions it draws that some figure
    scores differently: how many is binomial, and which ones uniform, so the rest are never drawn."""
    import numpy as np

    questions, differing = len(differences), _differing(differences)
    if not len(differing):
        return np.zeros((differing.shape[1], 2))

    def means(rng: np.random.Generator, size: int) -> np.ndarray:
        drawn = rng.binomial(questions, len(differing) / questions, size)
        running = np.cumsum(differing[rng.integers(0, len(differing), drawn.sum())], axis=0)
        running = np.vstack((np.zeros((1, differing.shape[1])), running))
        ends = np.cumsum(drawn)
        return (running[ends] - running[ends - drawn]) / questions

    return percentile_bootstrap(means, _per_chunk(len(differing)), level, resamples, seed)


def percentile_bootstrap(
    statistics: Callable[[np.random.Generator, int], np.ndarray],
    step: int,
    level: float = LEVEL,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = SEED,
) -> np.ndarray:
    """The percentile interval of a statistic over `resamples` bootstrap resamples, each drawn by
    `statistics(rng, size)` as `size` values (or rows of values), at most `step` at a time to bound
    memory; one (low, high) row per column. Every bootstrap draws from the one seeded generator this way,
    so an interval is the same each time it is asked."""
    import numpy as np

    rng = np.random.default_rng(seed)
    drawn = np.concatenate([statistics(rng, size) for size in _chunks(resamples, step)])
    return np.quantile(drawn, [(1 - level) / 2, (1 + level) / 2], axis=0).T


def _differing(differences: np.ndarray) -> np.ndarray:
    """The rows (questions) where some column (figure) differs from zero, as a 2-D float array."""
    import numpy as np

    values = np.asarray(differences, np.float64).reshape(len(differences), -1)
    return values[(values != 0).any(axis=1)]


def _per_chunk(width: int) -> int:
    """Resamples drawn at once when each draws `width` values."""
    return max(1, _CHUNK // width)


def _chunks(resamples: int, step: int) -> list[int]:
    return [min(step, resamples - start) for start in range(0, resamples, step)]
