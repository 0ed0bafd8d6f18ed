"""Regression detection (SPEC section 5): a pure comparison of a run with its baseline."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from fractions import Fraction

from retrieval_pipeline.core.results import GroupRates, RunResult
from retrieval_pipeline.core.significance import discordant_pairs, mcnemar_exact_p

DEFAULT_MAX_DROP = 0.1


def tolerance_problem(name: str, value: object) -> str | None:
    """Why `value` cannot be the tolerance `name`, or None when it can.

    Tolerances named `..._ms` are milliseconds (finite, >= 0); every other one is a fraction in [0, 1].
    A rate tolerance above 1 can never be exceeded and infinity or NaN never compare, so each would
    silently switch the gate off; `10` is almost always 10 percentage points meant as 0.10.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be a number, got {type(value).__name__}"
    if name.endswith("_ms"):
        return None if math.isfinite(value) and value >= 0 else f"must be a finite number of milliseconds >= 0, got {value}"
    if math.isfinite(value) and 0 <= value <= 1:
        return None
    hint = ""
    if math.isfinite(value) and 1 < value <= 100:
        hint = f"; did you mean {value / 100:.2f}?" if value == int(value) else f"; did you mean {value / 100:g}?"
    return f"must be a fraction from 0 to 1 (0.1 = 10 pp), got {value:g}{hint}"


@dataclass(frozen=True)
class Tolerances:
    """Largest changes accepted: drops absolute on the 0..1 scale, latency in ms; checked on construction,
    so a tolerance that would switch the gate off is refused before anything runs or is saved."""

    max_top1_drop: float = DEFAULT_MAX_DROP
    max_top3_drop: float = DEFAULT_MAX_DROP
    max_p95_latency_increase_ms: float | None = None

    def __post_init__(self) -> None:
        for field in fields(self):
            problem = tolerance_problem(field.name, getattr(self, field.name))
            if problem:
                raise ValueError(f"{field.name} {problem}")


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


def detect_regression(current: RunResult, baseline: RunResult | None, tolerances: Tolerances) -> RegressionReport:
    if baseline is None:
        return RegressionReport(has_baseline=False, is_regression=False, summary="No baseline: recorded as the baseline.")
    top1_delta = current.top1_hit_rate - baseline.top1_hit_rate
    top3_delta = current.top3_hit_rate - baseline.top3_hit_rate
    drops = [
        f"top-{k} hit rate dropped {_pp(baseline.hit_rate(k) - current.hit_rate(k))} (tolerance {_pp(tolerance)})"
        for k, tolerance in ((1, tolerances.max_top1_drop), (3, tolerances.max_top3_drop))
        if exceeds(exact_drop(baseline, current, k), tolerance)
    ]
    latency_delta = _p95_delta(current, baseline)
    limit = tolerances.max_p95_latency_increase_ms
    if limit is not None and latency_delta is not None and latency_delta > limit:
        drops.append(f"p95 latency rose {latency_delta:.1f} ms (tolerance {limit:.1f} ms)")
    if drops:
        summary = "Regression: " + "; ".join(drops) + "."
    else:
        summary = f"No regression: top-1 {_signed_pp(top1_delta)}, top-3 {_signed_pp(top3_delta)}."
    to_miss, to_hit = flipped_questions(current, baseline)
    return RegressionReport(
        has_baseline=True,
        is_regression=bool(drops),
        summary=summary,
        top1_delta=top1_delta,
        top3_delta=top3_delta,
        baseline_run_id=baseline.run_id,
        p95_latency_delta_ms=latency_delta,
        by_form=group_deltas(current.by_form(), baseline.by_form()),
        by_hard_class=group_deltas(current.by_hard_class(), baseline.by_hard_class()),
        flipped_to_miss=to_miss,
        flipped_to_hit=to_hit,
        top1_p_value=_paired_p(baseline, current, 1),
        top3_p_value=_paired_p(baseline, current, 3),
    )


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


def _paired_p(first: RunResult, second: RunResult, k: int) -> float:
    hits = [{q.question_id: q.hit_at(k) for q in run.questions} for run in (first, second)]
    return mcnemar_exact_p(*discordant_pairs(*hits))


def _p95_delta(current: RunResult, baseline: RunResult) -> float | None:
    now, then = current.latency_percentiles().get("p95"), baseline.latency_percentiles().get("p95")
    return None if now is None or then is None else now - then


def _pp(fraction: float) -> str:
    return f"{fraction * 100:.1f} pp"


def _signed_pp(fraction: float) -> str:
    return f"{fraction * 100:+.1f} pp"
