"""How far a machine judge can be trusted: its agreement with human labels on the rows both answered.

A machine judge's yes/no is worth using only where it agrees with people beyond chance. Cohen's kappa
says how far, with a 95% interval from the large-sample standard error of Fleiss, Cohen & Everitt
(1969), the one that holds away from kappa = 0 (the null-hypothesis error would understate it). The
same variance tells how many rows a person must answer for the interval to shrink under a width. The
confusion matrix, the base rates and the machine yes's precision and recall say where it errs: LLM
judges over-label as relevant (Alaofi et al. 2025), which shows as a precision below the recall.
Kendall's tau compares the retrievers' ranking under two label choices (tau-b, which counts ties).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations

from retrieval_pipeline.core.scoring.stats.intervals import Z_95


@dataclass(frozen=True)
class Confusion:
    """Rows by (human answer, machine answer)."""

    both_yes: int
    human_yes_machine_no: int
    human_no_machine_yes: int
    both_no: int

    def __post_init__(self) -> None:
        if min(self.both_yes, self.human_yes_machine_no, self.human_no_machine_yes, self.both_no) < 0:
            raise ValueError(f"a confusion matrix counts rows, never fewer than none: {self}")

    @property
    def n(self) -> int:
        return self.both_yes + self.human_yes_machine_no + self.human_no_machine_yes + self.both_no

    @property
    def human_yes(self) -> int:
        return self.both_yes + self.human_yes_machine_no

    @property
    def machine_yes(self) -> int:
        return self.both_yes + self.human_no_machine_yes


@dataclass(frozen=True)
class Agreement:
    """Kappa and its 95% interval (None when chance alone explains every row: both judges gave one
    answer throughout), with what it rests on."""

    kappa: float | None
    low: float | None
    high: float | None
    n: int
    confusion: Confusion
    human_yes_rate: float
    machine_yes_rate: float
    precision: float | None
    """Of the machine's yes, the share people said yes to; None when the machine never said yes."""
    recall: float | None
    """Of the people's yes, the share the machine said yes to; None when people never said yes."""
    variance: float | None
    """n times the squared standard error: the per-row variance that `rows_for_width` scales."""

    def __post_init__(self) -> None:
        if self.n != self.confusion.n or self.n < 1:
            raise ValueError(f"an agreement rests on at least one row and n counts its confusion's rows: {self.n}")


def kappa_agreement(pairs: Iterable[tuple[bool, bool]]) -> Agreement:
    """The agreement of (human says yes, machine says yes) pairs; at least one pair."""
    counts = [0, 0, 0, 0]
    for human, machine in pairs:
        counts[(0 if human else 2) + (0 if machine else 1)] += 1
    confusion = Confusion(*counts)
    n = confusion.n
    if n == 0:
        raise ValueError("no row carries both a human and a machine answer: nothing to calibrate against")
    human_yes, machine_yes = confusion.human_yes / n, confusion.machine_yes / n
    precision = confusion.both_yes / confusion.machine_yes if confusion.machine_yes else None
    recall = confusion.both_yes / confusion.human_yes if confusion.human_yes else None
    kappa, variance = _kappa_and_variance(confusion)
    low = high = None
    if kappa is not None and variance is not None:
        half = Z_95 * math.sqrt(variance / n)
        low, high = max(-1.0, kappa - half), min(1.0, kappa + half)
    return Agreement(kappa, low, high, n, confusion, human_yes, machine_yes, precision, recall, variance)


def rows_for_width(agreement: Agreement, width: float) -> int | None:
    """How many more rows with both answers bring the interval's width (high - low) under `width`, at
    today's kappa and base rates: the width is 2·z·√(V/n), so n must exceed (2·z)²·V / width². None
    when kappa is undefined (no variance to scale)."""
    if not width > 0:
        raise ValueError(f"an interval width is positive, got {width!r}")
    if agreement.variance is None:
        return None
    needed = math.floor((2 * Z_95) ** 2 * agreement.variance / (width * width)) + 1
    return max(0, needed - agreement.n) if agreement.variance > 0 else 0


def kendall_tau(a: Mapping[str, float], b: Mapping[str, float]) -> float | None:
    """Kendall's tau-b between two scorings of the same retrievers (higher is better in both); None
    when fewer than two retrievers or either scoring ties them all."""
    if set(a) != set(b):
        raise ValueError(f"both rankings must score the same retrievers: {sorted(set(a) ^ set(b))} are in one only")
    concordant = discordant = tied_a = tied_b = 0
    for first, second in combinations(sorted(a), 2):
        step_a, step_b = a[first] - a[second], b[first] - b[second]
        tied_a += step_a == 0
        tied_b += step_b == 0
        sign = step_a * step_b
        concordant += sign > 0
        discordant += sign < 0
    pairs = len(a) * (len(a) - 1) // 2
    denominator = math.sqrt((pairs - tied_a) * (pairs - tied_b))
    return (concordant - discordant) / denominator if denominator else None


def _kappa_and_variance(confusion: Confusion) -> tuple[float | None, float | None]:
    """Kappa and n·SE² by Fleiss, Cohen & Everitt (1969), for the 2×2 table of proportions p_ij (i the
    human answer, j the machine's; row margins p_i., column margins p_.j):

        Var·n·(1-pe)² = Σ_i p_ii·(1 - (p_i. + p_.i)(1-κ))² + (1-κ)²·Σ_{i≠j} p_ij·(p_.i + p_j.)² - (κ - pe(1-κ))²
    """
    n = confusion.n
    p = [
        [confusion.both_yes / n, confusion.human_yes_machine_no / n],
        [confusion.human_no_machine_yes / n, confusion.both_no / n],
    ]
    rows = [p[0][0] + p[0][1], p[1][0] + p[1][1]]
    columns = [p[0][0] + p[1][0], p[0][1] + p[1][1]]
    observed = p[0][0] + p[1][1]
    chance = rows[0] * columns[0] + rows[1] * columns[1]
    if chance >= 1:
        return None, None
    kappa = (observed - chance) / (1 - chance)
    diagonal = sum(p[i][i] * (1 - (rows[i] + columns[i]) * (1 - kappa)) ** 2 for i in (0, 1))
    off = (1 - kappa) ** 2 * sum(p[i][j] * (columns[i] + rows[j]) ** 2 for i in (0, 1) for j in (0, 1) if i != j)
    variance = (diagonal + off - (kappa - chance * (1 - kappa)) ** 2) / (1 - chance) ** 2
    return kappa, max(variance, 0.0)
