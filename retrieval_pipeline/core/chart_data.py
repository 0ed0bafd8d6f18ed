"""What a history chart shows, read from the stored summaries: no drawing here (see `reports/charts.py`).

A chart is about one (set, retriever) pair: its last runs oldest first, the baseline the newest run
was judged against, and the tolerance band below that baseline. Whether a past run regressed is taken
from the verdict stored with it; runs stored before verdicts were kept are judged again from their
counts with the tolerances given, by the same exact rule as the regression check.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from retrieval_pipeline.core.history import HistoryEntry, RunSummary, read_summary, run_history
from retrieval_pipeline.core.regression import Tolerances, count_drop, exceeds
from retrieval_pipeline.core.store import HistoryKey, ResultStore, StoredRun

HISTORY_CHART_RUNS = 20


@dataclass(frozen=True)
class ChartPoint:
    """One run on the chart: its rates by metric name ("top-1", "top-3", ...), oldest point first."""

    run_id: str
    run_at: datetime
    complete: bool
    regressed: bool
    rates: tuple[tuple[str, float], ...]
    intervals: tuple[tuple[str, float, float], ...] = ()
    """(metric, low, high) where the run carries a confidence interval for that metric."""

    def rate(self, metric: str) -> float | None:
        return dict(self.rates).get(metric)

    def interval(self, metric: str) -> tuple[float, float] | None:
        return next(((low, high) for name, low, high in self.intervals if name == metric), None)


@dataclass(frozen=True)
class HistoryChartData:
    key: HistoryKey
    points: tuple[ChartPoint, ...]
    tolerances: Tolerances
    baseline: ChartPoint | None = None
    """The run the newest point was compared with (it may be older than the oldest point shown)."""

    @property
    def metrics(self) -> list[str]:
        """Every metric some shown run carries, in first-seen order (top-1 and top-3 first)."""
        return list(dict.fromkeys(name for point in self.points for name, _ in point.rates))

    @property
    def baseline_index(self) -> int | None:
        return next((i for i, p in enumerate(self.points) if self.baseline and p.run_id == self.baseline.run_id), None)

    def tolerance(self, metric: str) -> float | None:
        return {"top-1": self.tolerances.max_top1_drop, "top-3": self.tolerances.max_top3_drop}.get(metric)


def history_chart_data(
    store: ResultStore,
    key: HistoryKey,
    tolerances: Tolerances,
    *,
    runs: int = HISTORY_CHART_RUNS,
    baseline_run_id: str | None = None,
) -> HistoryChartData:
    """The last `runs` runs of `key`; the baseline is `baseline_run_id` when given (a pinned one), else the
    latest complete run older than the newest run, exactly as the next check would have chosen it."""
    entries = list(reversed(run_history(store, key, runs)))
    points = tuple(_point(entry, tolerances) for entry in entries)
    baseline = _baseline(store, key, entries, baseline_run_id)
    return HistoryChartData(key=key, points=points, tolerances=tolerances, baseline=baseline)


def _point(entry: HistoryEntry, tolerances: Tolerances) -> ChartPoint:
    summary = entry.summary
    return ChartPoint(
        run_id=summary.run_id,
        run_at=summary.run_at,
        complete=summary.complete,
        regressed=_regressed(entry, tolerances),
        rates=_rates(summary),
    )


def _rates(summary: RunSummary) -> tuple[tuple[str, float], ...]:
    by_cutoff = dict(summary.hit_rates) or {1: summary.top1_hit_rate, 3: summary.top3_hit_rate}
    return tuple((f"top-{k}", rate) for k, rate in sorted(by_cutoff.items()))


def _regressed(entry: HistoryEntry, tolerances: Tolerances) -> bool:
    if entry.baseline is None or not entry.summary.complete:
        return False
    before, after = entry.baseline, entry.summary
    return exceeds(
        count_drop((before.top1_hit_count, before.question_count), (after.top1_hit_count, after.question_count)),
        tolerances.max_top1_drop,
    ) or exceeds(
        count_drop((before.top3_hit_count, before.question_count), (after.top3_hit_count, after.question_count)),
        tolerances.max_top3_drop,
    )


def _baseline(store: ResultStore, key: HistoryKey, entries: list[HistoryEntry], pinned: str | None) -> ChartPoint | None:
    if not entries:
        return None
    if pinned is None:
        newest = entries[-1]
        if newest.baseline is not None:
            return _point_of(newest.baseline)
        older = [entry.summary for entry in entries[:-1] if entry.summary.complete]
        return _point_of(older[-1]) if older else None
    shown = next((entry.summary for entry in entries if entry.summary.run_id == pinned), None)
    if shown is not None:
        return _point_of(shown)
    return _point_of(read_summary(store, StoredRun(key, pinned, True)))


def _point_of(summary: RunSummary) -> ChartPoint:
    return ChartPoint(summary.run_id, summary.run_at, summary.complete, False, _rates(summary))
