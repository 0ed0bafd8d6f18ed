"""What a history chart shows, read from the stored summaries: no drawing here (see `reports/charts.py`).

A chart is about one (set, retriever) pair: its last runs oldest first, the baseline the newest run
was judged against, the tolerance band below that baseline, and where the golden set was edited.
Whether a past run regressed is taken from the verdict stored with it; runs stored before verdicts were
kept are judged again from their counts with the tolerances given, by the same exact rule as the check.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from retrieval_pipeline.core.scoring.regression import Verdict
from retrieval_pipeline.core.scoring.tolerances import Tolerances, count_drop, exceeds
from retrieval_pipeline.core.services.history import HistoryEntry, RunSummary, run_history, run_summary
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore, StoredRun

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
    set_fingerprint: str | None = None

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

    @property
    def set_edits(self) -> list[int]:
        """Indexes of the points whose golden set differs from the previous point's (both fingerprinted)."""
        return [
            index
            for index, (before, after) in enumerate(zip(self.points, self.points[1:]), start=1)
            if before.set_fingerprint and after.set_fingerprint and before.set_fingerprint != after.set_fingerprint
        ]

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
    run the newest was compared with, else the latest complete run before the newest."""
    entries = list(reversed(run_history(store, key, runs)))
    summaries = _Summaries(store, key, {entry.summary.run_id: entry.summary for entry in entries})
    points = tuple(_point(entry, summaries, tolerances) for entry in entries)
    return HistoryChartData(
        key=key, points=points, tolerances=tolerances, baseline=_baseline(entries, summaries, baseline_run_id)
    )


class _Summaries:
    """The shown runs' summaries, and any baseline older than them read once when first asked for (None
    when its summary cannot be read: the store reports it)."""

    def __init__(self, store: ResultStore, key: HistoryKey, shown: dict[str, RunSummary]):
        self._store, self._key, self._read = store, key, dict(shown)

    def get(self, run_id: str) -> RunSummary | None:
        if run_id not in self._read:
            found = next(self._store.summaries([StoredRun(self._key, run_id, True)]), None)
            self._read[run_id] = None if found is None else run_summary(*found)
        return self._read[run_id]


def _point(entry: HistoryEntry, summaries: _Summaries, tolerances: Tolerances) -> ChartPoint:
    summary = entry.summary
    baseline = summaries.get(entry.baseline_run_id) if entry.baseline_run_id is not None else None
    if summary.verdict is not None:
        regressed = summary.verdict == Verdict.REGRESSION.value
    else:
        regressed = summary.complete and baseline is not None and _regressed(baseline, summary, tolerances)
    return ChartPoint(
        summary.run_id, summary.run_at, summary.complete, regressed, _rates(summary), _intervals(summary), summary.set_fingerprint
    )


CHARTED_METRICS = ("mrr@", "ndcg@")
"""Ranking metrics drawn beside the hit rates; Recall@k would mostly repeat the top-k lines."""


def _rates(summary: RunSummary) -> tuple[tuple[str, float], ...]:
    by_cutoff = dict(summary.hit_rates) or {1: summary.top1_hit_rate, 3: summary.top3_hit_rate}
    metrics = tuple((name, value) for name, value in summary.metrics if name.startswith(CHARTED_METRICS))
    return tuple((f"top-{k}", rate) for k, rate in sorted(by_cutoff.items())) + metrics


def _intervals(summary: RunSummary) -> tuple[tuple[str, float, float], ...]:
    return tuple((f"top-{k}", low, high) for k, low, high in summary.hit_rate_intervals)


def _regressed(before: RunSummary, after: RunSummary, tolerances: Tolerances) -> bool:
    return exceeds(
        count_drop((before.top1_hit_count, before.question_count), (after.top1_hit_count, after.question_count)),
        tolerances.max_top1_drop,
    ) or exceeds(
        count_drop((before.top3_hit_count, before.question_count), (after.top3_hit_count, after.question_count)),
        tolerances.max_top3_drop,
    )


def _baseline(entries: list[HistoryEntry], summaries: _Summaries, pinned: str | None) -> ChartPoint | None:
    if not entries:
        return None
    chosen = pinned or entries[-1].baseline_run_id
    if chosen is None:
        older = [entry.summary.run_id for entry in entries[:-1] if entry.summary.complete]
        chosen = older[-1] if older else None
    summary = summaries.get(chosen) if chosen is not None else None
    return None if summary is None else _point_of(summary)


def _point_of(summary: RunSummary) -> ChartPoint:
    return ChartPoint(
        summary.run_id, summary.run_at, summary.complete, False, _rates(summary), _intervals(summary), summary.set_fingerprint
    )
