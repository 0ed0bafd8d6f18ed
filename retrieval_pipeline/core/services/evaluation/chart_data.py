"""What a history chart shows, read from the stored summaries: no drawing here (see `reports/charts.py`).

A chart is about one (set, retriever) pair: its last runs oldest first, the baseline the newest run
was judged against, the lowest rate that passes below that baseline, and where the golden set was edited. Which
figures are drawn is the measures' `charted` declaration. Whether a past run regressed is the verdict
stored with it; a run saved without a check is judged from its counts by the check's own exact rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.scoring.checks.metric_gates import dropped_hit_rates, hit_rate_gates
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.checks.verdicts import Verdict
from retrieval_pipeline.core.scoring.measures import HIT_RATE, TESTED, Figure, gates, in_declared_order
from retrieval_pipeline.core.services.evaluation.history import HistoryEntry, run_history
from retrieval_pipeline.core.services.evaluation.rescored_history import rescored_history
from retrieval_pipeline.core.storage.run_summary import RunSummary
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore, StoredRun

HISTORY_CHART_RUNS = 20


@dataclass(frozen=True)
class ChartPoint:
    """One run on the chart, oldest point first: its summary, and whether its check found a regression."""

    summary: RunSummary
    regressed: bool = False

    @property
    def run_id(self) -> str:
        return self.summary.run_id

    @property
    def complete(self) -> bool:
        return self.summary.complete

    @cached_property
    def rates(self) -> tuple[tuple[str, float], ...]:
        """(line, value) of every charted figure the run recorded ("top-1", ..., "mrr@10"), in declaration order;
        kept, as a chart asks each point for each line several times, and a nightly draws one per evaluation."""
        return tuple((figure.short, self.summary.figures[figure.key]) for figure in self.summary.recorded(charted=True))

    def rate(self, line: str) -> float | None:
        return dict(self.rates).get(line)

    @cached_property
    def intervals(self) -> tuple[tuple[str, float, float], ...]:
        """(line, low, high) where the run carries a confidence interval for that figure (the hit rates)."""
        shown = self.summary.recorded()
        return tuple((f.short, *self.summary.intervals[f.key]) for f in shown if f.key in self.summary.intervals)

    def interval(self, line: str) -> tuple[float, float] | None:
        return next(((low, high) for name, low, high in self.intervals if name == line), None)


@dataclass(frozen=True)
class HistoryChartData:
    key: HistoryKey
    points: tuple[ChartPoint, ...]
    tolerances: Tolerances
    baseline: ChartPoint | None = None
    """The run the newest point was compared with (it may be older than the oldest point shown)."""
    rescored: bool = False
    """Every point under the current labels (rescored_history.py), rather than as stored."""
    rescored_baseline: Mapping[str, float] = field(default_factory=dict)
    """By line (`top-1`, `top-3`): the baseline's rate rescored under the newest run's labels, when its
    check rescored the baseline: the rate the check measured the newest run's drop from, so the band
    hangs from it rather than from the baseline's point as stored."""

    def baseline_rate(self, line: str) -> float | None:
        """Where a line's baseline rate, and its lowest passing rate below it, are drawn: the rate the newest run's check compared with."""
        if line in self.rescored_baseline:
            return self.rescored_baseline[line]
        return self.baseline.rate(line) if self.baseline is not None else None

    @property
    def labels(self) -> str:
        """Which labels the points are scored by, as the chart states it."""
        return "current labels, every run rescored" if self.rescored else "labels as stored with each run"

    @property
    def figures(self) -> list[Figure]:
        """Every charted figure some shown run carries, in declaration order (top-1 and top-3 first)."""
        return in_declared_order({f.key: f for point in self.points for f in point.summary.recorded(charted=True)}.values())

    @property
    def metrics(self) -> list[str]:
        """The lines drawn, by name (`top-1`, ..., `mrr@10`)."""
        return [figure.short for figure in self.figures]

    @property
    def baseline_index(self) -> int | None:
        return next((i for i, p in enumerate(self.points) if self.baseline and p.run_id == self.baseline.run_id), None)

    @property
    def set_edits(self) -> list[int]:
        """Indexes of the points whose golden set differs from the previous point's (both fingerprinted)."""
        fingerprints = [point.summary.set_fingerprint for point in self.points]
        return [
            index
            for index, (before, after) in enumerate(zip(fingerprints, fingerprints[1:]), start=1)
            if before and after and before != after
        ]

    def tolerance(self, line: str) -> float | None:
        """The largest accepted drop of the figure, where a tolerance gates it by the exact rule (hit rates)."""
        cutoffs = tuple(sorted({k for point in self.points for k in point.summary.cutoffs}))
        limits = hit_rate_gates(gates(self.tolerances, cutoffs))
        return {HIT_RATE.short(k): tolerance for k, tolerance in limits.items()}.get(line)


def history_chart_data(
    store: ResultStore,
    key: HistoryKey,
    tolerances: Tolerances,
    *,
    runs: int = HISTORY_CHART_RUNS,
    baseline_run_id: str | None = None,
    labels: GoldenQuestionSet | None = None,
) -> HistoryChartData:
    """The last `runs` runs of `key`; the baseline is `baseline_run_id` when given (a pinned one), else the
    run the newest was compared with, else the latest complete run before the newest. Given the current
    set (`labels`), every run is shown rescored under its labels."""
    read = run_history(store, key, runs) if labels is None else rescored_history(store, key, labels, runs)
    entries = list(reversed(read))
    summaries = _Summaries(store, key, {entry.summary.run_id: entry.summary for entry in entries})
    points = tuple(_point(entry, summaries, tolerances) for entry in entries)
    baseline = _baseline(entries, summaries, baseline_run_id)
    return HistoryChartData(
        key=key,
        points=points,
        tolerances=tolerances,
        baseline=baseline,
        rescored=labels is not None,
        rescored_baseline=_rescored_baseline(entries, baseline),
    )


def _rescored_baseline(entries: list[HistoryEntry], baseline: ChartPoint | None) -> dict[str, float]:
    """The newest run's baseline rates as its check rescored them, by line, when the chart's baseline is
    that run's baseline (a pinned other one has none)."""
    if not entries or baseline is None or entries[-1].summary.baseline_run_id != baseline.run_id:
        return {}
    rescored = entries[-1].summary.rescored_baseline
    return {figure.short: rescored[figure.key][0] for figure in TESTED if figure.key in rescored}


class _Summaries:
    """The shown runs' summaries, and any baseline older than them read once when first asked for (None
    when its summary cannot be read: the store reports it)."""

    def __init__(self, store: ResultStore, key: HistoryKey, shown: dict[str, RunSummary]):
        self._store, self._key, self._read = store, key, dict(shown)

    def get(self, run_id: str) -> RunSummary | None:
        if run_id not in self._read:
            found = next(self._store.summaries([StoredRun(self._key, run_id, True)]), None)
            self._read[run_id] = None if found is None else RunSummary.of(self._key, found[1])
        return self._read[run_id]


def _point(entry: HistoryEntry, summaries: _Summaries, tolerances: Tolerances) -> ChartPoint:
    summary = entry.summary
    if summary.verdict is not None:
        return ChartPoint(summary, summary.verdict == Verdict.REGRESSION.value)
    baseline = summaries.get(entry.baseline_run_id) if entry.baseline_run_id is not None else None
    return ChartPoint(summary, summary.complete and baseline is not None and _dropped(baseline, summary, tolerances))


def _dropped(before: RunSummary, after: RunSummary, tolerances: Tolerances) -> bool:
    shared = [k for k in after.cutoffs if k in before.cutoffs]
    counts = {k: ((before.hit_count(k), before.question_count), (after.hit_count(k), after.question_count)) for k in shared}
    return bool(dropped_hit_rates(counts, gates(tolerances, shared)))


def _baseline(entries: list[HistoryEntry], summaries: _Summaries, pinned: str | None) -> ChartPoint | None:
    if not entries:
        return None
    chosen = pinned or entries[-1].baseline_run_id
    if chosen is None:
        older = [entry.summary.run_id for entry in entries[:-1] if entry.summary.complete]
        chosen = older[-1] if older else None
    summary = summaries.get(chosen) if chosen is not None else None
    return None if summary is None else ChartPoint(summary)
