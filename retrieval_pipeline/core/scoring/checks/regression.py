"""Regression detection: a pure comparison of a run with its baseline.

`detect_regression` is the one place a verdict is made. It first restricts both runs to the questions
present in both with identical fingerprints (a golden-set edit is never a retriever regression), then
compares the restricted pair: every delta, flip and p-value comes from that pair, so any further test
plugs in at `_compare` and sees the same questions. What a team tolerates (`tolerances`) and where a
change sits (`change_breakdown`) are asked by the history chart and the reports too, so they live apart.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from retrieval_pipeline.core.base.formatting import points, signed_pp
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.scoring.checks.change_breakdown import flipped_questions, group_deltas
from retrieval_pipeline.core.scoring.checks.later_turns import later_turns_drop
from retrieval_pipeline.core.scoring.checks.metric_gates import (
    dropped_between,
    hit_rate_gates,
    metric_deltas,
    metric_drops,
)
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances, exceeds
from retrieval_pipeline.core.scoring.checks.unjudged_losses import counted_relevant, unjudged_losses
from retrieval_pipeline.core.scoring.checks.verdicts import RegressionReport, Verdict
from retrieval_pipeline.core.scoring.failures import failure_summary
from retrieval_pipeline.core.scoring.measures import HIT_RATE, TESTED, Figure, Gate, gates
from retrieval_pipeline.core.scoring.rescoring import RescoredBaseline, rescored_baseline
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.set_versions import SetChanges, restrict, set_changes
from retrieval_pipeline.core.scoring.slices import SLICES
from retrieval_pipeline.core.scoring.stats.intervals import DEFAULT_SIGNIFICANCE, minimum_detectable_drop
from retrieval_pipeline.core.scoring.stats.slice_tests import SliceTest, overall_test, paired_slice_tests
from retrieval_pipeline.core.scoring.traffic import TrafficWeights, weighted_figures, weighted_hit_rate


def detect_regression(
    current: RunResult,
    baseline: RunResult | None,
    tolerances: Tolerances,
    unstable: Collection[str] = (),
    labels: GoldenQuestionSet | None = None,
    traffic: TrafficWeights | None = None,
) -> RegressionReport:
    """Headline rates stay the current run's own; the verdict looks only at the unchanged questions, less
    those known to flip on their own (`unstable`), so a flaky question cannot fail a gate alone. Given the
    set the current run measured (`labels`), questions relabelled since the baseline stay compared: the
    baseline is rescored under the current labels (rescoring.py). With `traffic`, the weighted figures'
    changes are measured on the same questions, and gated instead of the plain rates when
    `tolerances.weighted`."""
    if baseline is None:
        return RegressionReport(has_baseline=False, verdict=Verdict.BASELINE, summary="No baseline: recorded as the baseline.")
    if labels is None:
        return _detected(current, baseline, tolerances, unstable, set_changes(current, baseline), traffic)
    compared, changes = rescored_baseline(current, baseline, labels)
    report = _detected(current, compared, tolerances, unstable, changes, traffic)
    return report if compared is baseline else replace(report, rescored_baseline=RescoredBaseline(compared, baseline))


def _detected(
    current: RunResult,
    baseline: RunResult,
    tolerances: Tolerances,
    unstable: Collection[str],
    changes: SetChanges,
    traffic: TrafficWeights | None,
) -> RegressionReport:
    """The verdict against `baseline` as the check compares it (rescored already, when it was)."""
    excluded = tuple(i for i in changes.compared_ids if i in unstable)
    if excluded:
        return _without_unstable(current, baseline, tolerances, excluded, changes, traffic)
    if changes.compared < tolerances.min_compared_questions:
        return RegressionReport(
            has_baseline=True,
            verdict=Verdict.NOT_COMPARABLE,
            summary=f"Not comparable: only {changes.compared} {changes.kept} question(s) in common with baseline run "
            f"{baseline.run_id} (minimum {tolerances.min_compared_questions}). {changes.sentence()}"
            + (f" {changes.rescore_sentence}" if changes.rescore_sentence else ""),
            baseline_run_id=baseline.run_id,
            set_changes=changes,
        )
    ids = changes.compared_ids
    return _compare(restrict(current, ids), restrict(baseline, ids), tolerances, changes, traffic)


def _without_unstable(
    current: RunResult,
    baseline: RunResult,
    tolerances: Tolerances,
    excluded: tuple[str, ...],
    changes: SetChanges,
    traffic: TrafficWeights | None,
) -> RegressionReport:
    """The verdict on the runs less the unstable questions, which the report names (the baseline already
    rescored, and its rescoring kept in the set changes)."""
    kept = tuple(question_id for question_id in current.questions.ids if question_id not in excluded)
    report = detect_regression(
        restrict(current, kept),
        restrict(baseline, [question_id for question_id in baseline.questions.ids if question_id not in excluded]),
        tolerances,
        traffic=traffic,
    )
    listed = ", ".join(excluded[:10]) + (f" and {len(excluded) - 10} more" if len(excluded) > 10 else "")
    rescore = f" {changes.rescore_sentence}" if changes.rescore_sentence else ""
    return replace(
        report,
        excluded_unstable=excluded,
        summary=f"{report.summary}{rescore} Left out as unstable: {len(excluded)} question(s) ({listed}).",
        set_changes=_kept_rescoring(report.set_changes, changes),
    )


def _kept_rescoring(found: SetChanges | None, rescoring: SetChanges) -> SetChanges | None:
    """The changes found on the restricted runs, with what rescoring did to the whole baseline."""
    if found is None:
        return None
    return replace(
        found,
        relabelled=rescoring.relabelled,
        rescored=rescoring.rescored,
        not_rescored=rescoring.not_rescored,
        not_rescored_questions=rescoring.not_rescored_questions,
    )


def incomplete_report(current: RunResult, baseline: RunResult | None) -> RegressionReport:
    """An incomplete run is compared with nothing: its errored questions are not misses, and counting them
    so would report a regression the retrieval did not make."""
    return RegressionReport(
        has_baseline=baseline is not None,
        verdict=Verdict.INCOMPLETE,
        summary=f"Incomplete run: {failure_summary(current)}. Stored for inspection, not compared and never used as a baseline.",
        baseline_run_id=baseline.run_id if baseline else None,
        set_changes=set_changes(current, baseline) if baseline else None,
    )


def _compare(
    current: RunResult, baseline: RunResult, tolerances: Tolerances, changes: SetChanges, traffic: TrafficWeights | None
) -> RegressionReport:
    """Both runs over the same unchanged questions."""
    weighted = _weighted_deltas(current, baseline, traffic)
    gate_weighted = tolerances.weighted and traffic is not None
    tested = {figure: current.hit_rate(figure.k) - baseline.hit_rate(figure.k) for figure in TESTED}
    stated = {figure: dict(weighted)[figure.key] for figure in TESTED} if gate_weighted else tested
    tests = paired_slice_tests(baseline, current)
    significance = tolerances.min_significance or DEFAULT_SIGNIFICANCE
    held = gates(tolerances, current.cutoffs)
    if gate_weighted:
        drops, inconclusive = _weighted_drops(current, baseline, traffic, held), []
    else:
        drops, inconclusive = _hit_rate_drops(current, baseline, tolerances, tests, held)
    deltas = metric_deltas(current, baseline)
    drops += metric_drops(deltas, held)
    to_miss, to_hit = flipped_questions(current, baseline)
    losses = unjudged_losses(current, baseline, to_miss)
    unjudged = drops if losses.explain(tolerances.max_unjudged_share) else []
    if unjudged:
        drops = []
    latency_delta = _p95_delta(current, baseline)
    limit = tolerances.max_p95_latency_increase_ms
    slower = limit is not None and latency_delta is not None and latency_delta > limit
    if drops and not slower and losses.unjudged:  # labels cannot explain a latency rise
        relabelled = (counted_relevant(current, losses), counted_relevant(baseline, losses))
        losses = replace(losses, could_clear=not _beyond_tolerance(*relabelled, traffic, held, gate_weighted))
    if slower:
        drops.append(f"p95 latency rose {latency_delta:.1f} ms (tolerance {limit:.1f} ms)")
    scope = f"{changes.scope}, traffic-weighted by log '{traffic.log}'" if gate_weighted else changes.scope
    summary = _summary(scope, drops, inconclusive, unjudged, stated)
    # The unjudged lost hits enter the verdict only where they could change it: the reason for an
    # "inconclusive: unjudged", or a regression they would clear if relevant. Elsewhere they are a count.
    doubt = losses.sentence() if unjudged else losses.clearing_sentence()
    if doubt:
        summary = f"{summary} {doubt}"
    confined = later_turns_drop(current.by_turn_depth(), baseline.by_turn_depth(), held)
    if confined:
        summary = f"{summary} {confined}"
    if changes.rescore_sentence:
        summary += f" {changes.rescore_sentence}"
    paired = overall_test(tests, TESTED[0].k).questions
    return RegressionReport(
        has_baseline=True,
        unjudged_losses=losses,
        verdict=Verdict.REGRESSION if drops else Verdict.INCONCLUSIVE if inconclusive or unjudged else Verdict.PASS,
        slice_tests=tests,
        significance=significance,
        minimum_detectable_drop=minimum_detectable_drop(paired, significance, len(tests)),
        metric_deltas=deltas,
        summary=summary,
        hit_rate_deltas=tuple((figure.k, delta) for figure, delta in tested.items()),
        baseline_run_id=baseline.run_id,
        p95_latency_delta_ms=latency_delta,
        by_slice=tuple((s.name, group_deltas(current.breakdown(s.name), baseline.breakdown(s.name))) for s in SLICES),
        flipped_to_miss=to_miss,
        flipped_to_hit=to_hit,
        hit_rate_p_values=tuple((figure.k, overall_test(tests, figure.k).p_value) for figure in TESTED),
        set_changes=changes,
        weighted_deltas=weighted,
        weighted_gate=gate_weighted,
    )


def _hit_rate_drops(
    current: RunResult, baseline: RunResult, tolerances: Tolerances, tests: tuple[SliceTest, ...], held: tuple[Gate, ...]
) -> tuple[list[str], list[str]]:
    """The gated hit rates that dropped beyond tolerance, held to it exactly by their counts: (regressions,
    drops whose Holm-corrected p-value is above `min_significance`, inconclusive)."""
    limits = hit_rate_gates(held)
    drops, inconclusive = [], []
    for k in dropped_between(baseline, current, held):
        drop = f"{Figure(HIT_RATE, k).title} hit rate dropped {points(baseline.hit_rate(k) - current.hit_rate(k))} (tolerance {points(limits[k])})"
        corrected = overall_test(tests, k).corrected_p_value
        if tolerances.min_significance is not None and corrected > tolerances.min_significance:
            inconclusive.append(f"{drop}, corrected p = {corrected:.3f} above {tolerances.min_significance:g}")
        else:
            drops.append(drop)
    return drops, inconclusive


def _beyond_tolerance(
    current: RunResult, baseline: RunResult, traffic: TrafficWeights | None, held: tuple[Gate, ...], gate_weighted: bool
) -> bool:
    """Some gated figure dropped beyond its tolerance, whatever its p-value: the hit rates (or the weighted
    ones) by their exact rule, and each gated ranking figure."""
    if gate_weighted:
        hit_rates = bool(_weighted_drops(current, baseline, traffic, held))
    else:
        hit_rates = bool(dropped_between(baseline, current, held))
    return hit_rates or bool(metric_drops(metric_deltas(current, baseline), held))


def _weighted_deltas(current: RunResult, baseline: RunResult, traffic: TrafficWeights | None) -> tuple[tuple[str, float], ...]:
    """Each weighted figure's change, the same weights on the same questions; none without traffic."""
    if traffic is None:
        return ()
    now, then = weighted_figures(current, traffic).values, weighted_figures(baseline, traffic).values
    return tuple((key, value - then[key]) for key, value in now.items() if key in then)


def _weighted_drops(current: RunResult, baseline: RunResult, traffic: TrafficWeights, held: tuple[Gate, ...]) -> list[str]:
    """The weighted hit rates that dropped beyond their tolerance, held to it exactly (the traffic is counted).
    Not held to `min_significance`: the paired test counts questions, and says nothing of their traffic."""
    drops = []
    for k, tolerance in hit_rate_gates(held).items():
        drop = weighted_hit_rate(baseline, traffic, k) - weighted_hit_rate(current, traffic, k)
        if exceeds(drop, tolerance):
            drops.append(f"{Figure(HIT_RATE, k).title} hit rate dropped {points(float(drop))} (tolerance {points(tolerance)})")
    return drops


def _summary(scope: str, drops: list[str], inconclusive: list[str], unjudged: list[str], tested: dict[Figure, float]) -> str:
    """`unjudged`: the drops that more than `max_unjudged_share` of the lost hits' unjudged documents explain;
    `tested`: each tested rate's change, which a run without a regression states."""
    doubts = (
        [f"Inconclusive{scope}: " + "; ".join(inconclusive) + ": the set cannot tell this from noise."] if inconclusive else []
    )
    if unjudged:
        doubts.append(f"Inconclusive{scope}: unjudged: " + "; ".join(unjudged) + ".")
    if drops:
        return " ".join([f"Regression{scope}: " + "; ".join(drops) + ".", *doubts])
    if doubts:
        return " ".join(doubts)
    return f"No regression{scope}: " + ", ".join(f"{figure.title} {signed_pp(delta)}" for figure, delta in tested.items()) + "."


def _p95_delta(current: RunResult, baseline: RunResult) -> float | None:
    now, then = current.latency_percentiles().get("p95"), baseline.latency_percentiles().get("p95")
    return None if now is None or then is None else now - then
