"""Optional gates on the ranking metrics: the verdict stays on top-1/top-3 unless a team asks for more.

Each gate applies at the run's deepest cut-off D (`mrr@D`, `ndcg@D`, `recall@D`), the depth the metrics
are computed at (see ranking_metrics.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from retrieval_pipeline.core.scoring.results import RunResult

METRIC_TOLERANCES = {"max_mrr_drop": "mrr", "max_ndcg_drop": "ndcg", "max_recall_drop": "recall"}
"""Tolerance option to the metric it gates."""

FLOAT_SLACK = 1e-12
"""Metric means are sums of real numbers: a hair of float error is not a drop beyond a tolerance it equals."""


def metric_deltas(current: RunResult, baseline: RunResult) -> tuple[tuple[str, float], ...]:
    """Current minus baseline for every metric both runs have (a changed deepest cut-off shares none)."""
    before = baseline.metrics()
    return tuple((name, value - before[name]) for name, value in current.metrics().items() if name in before)


def metric_drops(deltas: tuple[tuple[str, float], ...], tolerances: Mapping[str, float | None]) -> list[str]:
    """A sentence for each gated metric that dropped by more than its tolerance (`tolerances` by option)."""
    by_name = dict(deltas)
    depth = max((int(name.split("@")[1]) for name in by_name), default=0)
    drops = []
    for option, metric in METRIC_TOLERANCES.items():
        tolerance, delta = tolerances.get(option), by_name.get(f"{metric}@{depth}")
        if tolerance is not None and delta is not None and -delta > tolerance + FLOAT_SLACK:
            drops.append(f"{metric}@{depth} dropped {-delta:.3f} (tolerance {tolerance:g})")
    return drops
