"""Exact McNemar test: on a small set one question is several points, so tell noise from change."""

from __future__ import annotations

from math import comb


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


def discordant_pairs(first: dict[str, bool | None], second: dict[str, bool | None]) -> tuple[int, int]:
    """Count questions hit by one side only, over the questions both sides answered."""
    only_first = only_second = 0
    for question_id, hit in first.items():
        other = second.get(question_id)
        if hit is None or other is None:
            continue
        only_first += bool(hit and not other)
        only_second += bool(other and not hit)
    return only_first, only_second
