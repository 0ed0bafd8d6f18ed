"""Optional gates on the ranking measures: the verdict stays on top-1/top-3 unless a team asks for more.

Which tolerance option gates which measure, and at which cut-off, is the measure's declaration
(measures.py); the hit rates are held to their tolerances by the exact rule in tolerances.py instead.
"""

from __future__ import annotations

from collections.abc import Mapping

from retrieval_pipeline.core.scoring.measures import gated_figures, ranking_figures
from retrieval_pipeline.core.scoring.results import RunResult

FLOAT_SLACK = 1e-12
"""Metric means are sums of real numbers: a hair of float error is not a drop beyond a tolerance it equals."""


def ranking_gate_options() -> tuple[str, ...]:
    """Every tolerance option that gates a ranking measure, in declaration order."""
    return tuple(dict.fromkeys(option for figure, option in gated_figures((1,)) if figure.measure.score is not None))


def metric_deltas(current: RunResult, baseline: RunResult) -> tuple[tuple[str, float], ...]:
    """Current minus baseline for every metric both runs have (a changed deepest cut-off shares none)."""
    before = baseline.metrics()
    return tuple((name, value - before[name]) for name, value in current.metrics().items() if name in before)


def metric_drops(deltas: tuple[tuple[str, float], ...], tolerances: Mapping[str, float | None]) -> list[str]:
    """A sentence for each gated ranking figure that dropped by more than its tolerance (`tolerances` by
    option name), at the deepest cut-off the deltas share."""
    by_key = dict(deltas)
    depth = max((int(key.split("@")[1]) for key in by_key), default=0)
    shown = {figure.key for figure in ranking_figures((depth,))}
    drops = []
    for figure, option in gated_figures((depth,)):
        tolerance, delta = tolerances.get(option), by_key.get(figure.key)
        if figure.key in shown and tolerance is not None and delta is not None and -delta > tolerance + FLOAT_SLACK:
            drops.append(f"{figure.key} dropped {-delta:.3f} (tolerance {tolerance:g})")
    return drops
