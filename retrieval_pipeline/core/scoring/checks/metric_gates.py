"""The gates a comparison holds figures to, each by the rule its kind of figure needs.

Which tolerance gates which figure is the measure's declaration, read once into `Gate`s (measures.py).
A hit rate is a ratio of counts, held to its tolerance exactly (the drop rule in tolerances.py); a
ranking measure is a mean of real numbers, held with a hair of float slack. The verdict stays on
top-1/top-3 unless a team sets a ranking measure's tolerance too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from retrieval_pipeline.core.scoring.checks.tolerances import count_drop, exceeds
from retrieval_pipeline.core.scoring.measures import HIT_RATE, Figure, Gate, figure_of
from retrieval_pipeline.core.scoring.results import RunResult

FLOAT_SLACK = 1e-12
"""Metric means are sums of real numbers: a hair of float error is not a drop beyond a tolerance it equals."""


def hit_rate_gates(held: Sequence[Gate]) -> dict[int, float]:
    """The gated hit rates' tolerances by cut-off."""
    return {gate.figure.k: gate.tolerance for gate in held if gate.figure.measure is HIT_RATE}


def dropped_hit_rates(counts: Mapping[int, tuple[tuple[int, int], tuple[int, int]]], held: Sequence[Gate]) -> list[int]:
    """The cut-offs whose gated hit rate dropped beyond its tolerance, from (before, after) counts of
    (hits, questions) by cut-off: the check's exact rule, for runs known only by their stored counts."""
    return [k for k, tolerance in hit_rate_gates(held).items() if k in counts and exceeds(count_drop(*counts[k]), tolerance)]


def dropped_between(baseline: RunResult, current: RunResult, held: Sequence[Gate]) -> list[int]:
    """The cut-offs whose gated hit rate dropped beyond its tolerance between two whole runs."""
    return dropped_hit_rates(_hit_counts(baseline, current, tuple(hit_rate_gates(held))), held)


def _hit_counts(baseline: RunResult, current: RunResult, ks: Sequence[int]) -> dict[int, tuple[tuple[int, int], tuple[int, int]]]:
    """(before, after) counts of (hits, questions) at each cut-off: what the exact rule compares."""
    return {k: ((baseline.hit_count(k), baseline.question_count), (current.hit_count(k), current.question_count)) for k in ks}


def exact_drop(baseline: RunResult, current: RunResult, k: int) -> Fraction:
    """Rates are ratios of counts; comparing them exactly keeps 0.8 - 0.7 from exceeding 0.1."""
    return count_drop(*_hit_counts(baseline, current, (k,))[k])


def metric_deltas(current: RunResult, baseline: RunResult) -> tuple[tuple[str, float], ...]:
    """Current minus baseline for every metric both runs have (a changed deepest cut-off shares none)."""
    before = baseline.metrics()
    return tuple((name, value - before[name]) for name, value in current.metrics().items() if name in before)


def metric_drops(deltas: tuple[tuple[str, float], ...], held: Sequence[Gate]) -> list[str]:
    """A sentence for each gated ranking measure that dropped by more than its tolerance, at the deepest
    cut-off the deltas share (a run whose deepest cut-off changed is compared where the two still meet)."""
    by_key = dict(deltas)
    depth = max((figure.k for figure in map(figure_of, by_key) if figure is not None), default=0)
    drops = []
    for gate in held:
        if gate.figure.measure is HIT_RATE:
            continue
        figure = Figure(gate.figure.measure, depth)
        delta = by_key.get(figure.key)
        if delta is not None and -delta > gate.tolerance + FLOAT_SLACK:
            drops.append(f"{figure.key} dropped {-delta:.3f} (tolerance {gate.tolerance:g})")
    return drops
