"""Regression detection (SPEC section 5): a pure comparison of a run with its baseline."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from retrieval_pipeline.core.intervals import DEFAULT_SIGNIFICANCE, minimum_detectable_drop
from retrieval_pipeline.core.results import GroupRates, RunResult
from retrieval_pipeline.core.slice_tests import SliceTest, overall_test, paired_slice_tests

DEFAULT_MAX_DROP = 0.1
METRIC_TOLERANCES = {"max_mrr_drop": "mrr", "max_ndcg_drop": "ndcg", "max_recall_drop": "recall"}
"""Optional gates on the ranking metrics, each at the run's deepest cut-off (`mrr@D`, `ndcg@D`, `recall@D`)."""


@dataclass(frozen=True)
class Tolerances:
    """Largest drops accepted, absolute on the 0..1 scale; a negative one is refused before anything runs."""

    max_top1_drop: float = DEFAULT_MAX_DROP
    max_top3_drop: float = DEFAULT_MAX_DROP
    max_p95_latency_increase_ms: float | None = None
    max_mrr_drop: float | None = None
    max_ndcg_drop: float | None = None
    max_recall_drop: float | None = None
    min_significance: float | None = None
    """When set, a hit-rate drop beyond tolerance whose Holm-corrected p-value is above it is inconclusive."""

    def __post_init__(self) -> None:
        for name in ("max_top1_drop", "max_top3_drop", "max_p95_latency_increase_ms", *METRIC_TOLERANCES):
            value = getattr(self, name)
            if value is not None and not value >= 0:
                raise ValueError(f"{name} must be a non-negative number, got {value!r}")
        if self.min_significance is not None and not 0 < self.min_significance < 1:
            raise ValueError(f"min_significance must lie strictly between 0 and 1, got {self.min_significance!r}")


@dataclass(frozen=True)
class GroupDelta:
    """Deltas inside one form or hard class, so a drop that cancels out overall stays visible."""

    key: str
    questions: int
    top1_delta: float
    top3_delta: float


@dataclass(frozen=True)
class RegressionReport:
    has_baseline: bool
    is_regression: bool
    summary: str
    top1_delta: float = 0.0
    top3_delta: float = 0.0
    baseline_run_id: str | None = None
    p95_latency_delta_ms: float | None = None
    by_form: tuple[GroupDelta, ...] = ()
    by_hard_class: tuple[GroupDelta, ...] = ()
    flipped_to_miss: tuple[str, ...] = ()
    flipped_to_hit: tuple[str, ...] = ()
    top1_p_value: float = 1.0
    top3_p_value: float = 1.0
    is_inconclusive: bool = False
    """A drop beyond tolerance that its corrected p-value cannot tell from noise (only with min_significance)."""
    slice_tests: tuple[SliceTest, ...] = ()
    significance: float = DEFAULT_SIGNIFICANCE
    """The level the report states results at: `min_significance`, else 0.05."""
    minimum_detectable_drop: float | None = None
    """The smallest hit-rate drop that can reach `significance` on the compared questions (None: none can)."""
    metric_deltas: tuple[tuple[str, float], ...] = ()
    """Ranking metrics, current minus baseline, for every metric both runs have."""


def detect_regression(current: RunResult, baseline: RunResult | None, tolerances: Tolerances) -> RegressionReport:
    if baseline is None:
        return RegressionReport(has_baseline=False, is_regression=False, summary="No baseline: recorded as the baseline.")
    top1_delta = current.top1_hit_rate - baseline.top1_hit_rate
    top3_delta = current.top3_hit_rate - baseline.top3_hit_rate
    tests = paired_slice_tests(baseline, current)
    significance = tolerances.min_significance or DEFAULT_SIGNIFICANCE
    drops, inconclusive = [], []
    for k, tolerance in ((1, tolerances.max_top1_drop), (3, tolerances.max_top3_drop)):
        if exceeds(exact_drop(baseline, current, k), tolerance):
            drop = f"top-{k} hit rate dropped {_pp(baseline.hit_rate(k) - current.hit_rate(k))} (tolerance {_pp(tolerance)})"
            corrected = overall_test(tests, k).corrected_p_value
            if tolerances.min_significance is not None and corrected > tolerances.min_significance:
                inconclusive.append(f"{drop}, corrected p = {corrected:.3f} above {tolerances.min_significance:g}")
            else:
                drops.append(drop)
    metric_deltas = _metric_deltas(current, baseline)
    drops += metric_drops(metric_deltas, tolerances)
    latency_delta = _p95_delta(current, baseline)
    limit = tolerances.max_p95_latency_increase_ms
    if limit is not None and latency_delta is not None and latency_delta > limit:
        drops.append(f"p95 latency rose {latency_delta:.1f} ms (tolerance {limit:.1f} ms)")
    summary = _summary(drops, inconclusive, top1_delta, top3_delta)
    to_miss, to_hit = flipped_questions(current, baseline)
    paired = overall_test(tests, 1).questions
    return RegressionReport(
        has_baseline=True,
        is_regression=bool(drops),
        is_inconclusive=bool(inconclusive) and not drops,
        slice_tests=tests,
        significance=significance,
        minimum_detectable_drop=minimum_detectable_drop(paired, significance, len(tests)),
        metric_deltas=metric_deltas,
        summary=summary,
        top1_delta=top1_delta,
        top3_delta=top3_delta,
        baseline_run_id=baseline.run_id,
        p95_latency_delta_ms=latency_delta,
        by_form=group_deltas(current.by_form(), baseline.by_form()),
        by_hard_class=group_deltas(current.by_hard_class(), baseline.by_hard_class()),
        flipped_to_miss=to_miss,
        flipped_to_hit=to_hit,
        top1_p_value=overall_test(tests, 1).p_value,
        top3_p_value=overall_test(tests, 3).p_value,
    )


def _summary(drops: list[str], inconclusive: list[str], top1_delta: float, top3_delta: float) -> str:
    doubt = "Inconclusive: " + "; ".join(inconclusive) + ": the set cannot tell this from noise."
    if drops:
        return "Regression: " + "; ".join(drops) + "." + (f" {doubt}" if inconclusive else "")
    if inconclusive:
        return doubt
    return f"No regression: top-1 {_signed_pp(top1_delta)}, top-3 {_signed_pp(top3_delta)}."


def _metric_deltas(current: RunResult, baseline: RunResult) -> tuple[tuple[str, float], ...]:
    before = baseline.metrics()
    return tuple((name, value - before[name]) for name, value in current.metrics().items() if name in before)


def metric_drops(metric_deltas: tuple[tuple[str, float], ...], tolerances: Tolerances) -> list[str]:
    """Drops of the gated ranking metrics at the deepest cut-off; means of real numbers, so a hair of float
    error is forgiven rather than reported as a drop beyond a tolerance it equals."""
    deltas = dict(metric_deltas)
    depth = max((int(name.split("@")[1]) for name in deltas), default=0)
    drops = []
    for option, metric in METRIC_TOLERANCES.items():
        tolerance, delta = getattr(tolerances, option), deltas.get(f"{metric}@{depth}")
        if tolerance is not None and delta is not None and -delta > tolerance + 1e-12:
            drops.append(f"{metric}@{depth} dropped {-delta:.3f} (tolerance {tolerance:g})")
    return drops


def exact_drop(baseline: RunResult, current: RunResult, k: int) -> Fraction:
    """Rates are ratios of counts; comparing them exactly keeps 0.8 - 0.7 from exceeding 0.1."""
    return _ratio(baseline.hit_count(k), baseline.question_count) - _ratio(current.hit_count(k), current.question_count)


def exceeds(drop: Fraction, tolerance: float) -> bool:
    """Strictly greater: a drop equal to the tolerance, as the user wrote it in decimal, is accepted."""
    return drop > Fraction(repr(float(tolerance)))


def _ratio(hits: int, questions: int) -> Fraction:
    return Fraction(hits, questions) if questions else Fraction(0)


def group_deltas(current: dict[str, GroupRates], baseline: dict[str, GroupRates]) -> tuple[GroupDelta, ...]:
    """Keys of the current run in its order, then keys only the baseline had (their rate fell to nothing)."""
    empty = GroupRates(0, 0, 0)
    keys = list(current) + [key for key in baseline if key not in current]
    return tuple(
        GroupDelta(
            key=key,
            questions=current.get(key, empty).questions,
            top1_delta=current.get(key, empty).top1_hit_rate - baseline.get(key, empty).top1_hit_rate,
            top3_delta=current.get(key, empty).top3_hit_rate - baseline.get(key, empty).top3_hit_rate,
        )
        for key in keys
    )


def flipped_questions(current: RunResult, baseline: RunResult) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Questions that lost a hit at any cut-off, and questions that gained one (never both: hits nest)."""
    before = {q.question_id: q for q in baseline.questions}
    to_miss, to_hit = [], []
    for question in current.questions:
        old = before.get(question.question_id)
        if old is None or question.error is not None or old.error is not None:
            continue
        pairs = [(old.hit_at(k), question.hit_at(k)) for k in (1, 3)]
        if any(was and not now for was, now in pairs):
            to_miss.append(question.question_id)
        elif any(now and not was for was, now in pairs):
            to_hit.append(question.question_id)
    return tuple(to_miss), tuple(to_hit)


def _p95_delta(current: RunResult, baseline: RunResult) -> float | None:
    now, then = current.latency_percentiles().get("p95"), baseline.latency_percentiles().get("p95")
    return None if now is None or then is None else now - then


def _pp(fraction: float) -> str:
    return f"{fraction * 100:.1f} pp"


def _signed_pp(fraction: float) -> str:
    return f"{fraction * 100:+.1f} pp"
