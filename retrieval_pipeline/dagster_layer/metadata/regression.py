"""The checks' metadata: `no_regression` on an evaluation, `every_pair_passes` on the leaderboard. Figures
are text, not numbers: the UI would plot numbers across every partition as one zig-zagging line; the
pair's own history is the evaluation's `history_chart`."""

from __future__ import annotations

from typing import Any

from retrieval_pipeline.core.base.formatting import as_written, milliseconds, p_value, points
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.measures import TESTED, gates
from retrieval_pipeline.core.scoring.set_versions import SetChanges
from retrieval_pipeline.core.services.evaluation.pair_verdicts import PairVerdicts
from retrieval_pipeline.core.services.views.breakdowns import Breakdown
from retrieval_pipeline.core.services.views.evaluation_view import EvaluationView
from retrieval_pipeline.core.services.views.figure_rows import is_hit_rate
from retrieval_pipeline.dagster_layer.metadata.values import Column, Json, Table, table

MAX_LISTED_QUESTIONS = 200

DELTA_COLUMNS = (
    Column("key", "string"),
    Column("questions", "int", description="Questions in this group in the current run"),
    *[
        Column(f"{figure.key}_change", "string", description=f"{figure.title.capitalize()} hit rate change, percentage points")
        for figure in TESTED
    ],
)
SLICE_TEST_COLUMNS = (
    Column("slice", "string", description="overall, form, hard_class or turn_depth"),
    Column("key", "string"),
    Column("measure", "string", description="The figure compared: top1, top3, mrr@10, ..."),
    Column("k", "int", description="Cut-off"),
    Column("questions", "int"),
    Column("change", "string", description="Change: percentage points for a hit rate, the score for a ranking measure"),
    Column("delta_95_ci", "string", description="95% bootstrap interval of the change (ranking measures)"),
    Column("p_value", "string", description="Uncorrected: exact McNemar (hit rates), paired randomization (ranking)"),
    Column("corrected_p_value", "string", description="Holm-corrected over every test of the table"),
    Column("survives", "bool", description="Corrected p-value at or below the significance level"),
)
PAIRS_COLUMNS = (
    Column("set", "string"),
    Column("retriever", "string"),
    Column("verdict", "string", description="The latest run's stored verdict"),
    Column("sentence", "string", description="What the pair's no_regression check said"),
    Column("run_id", "string"),
)


def regression_metadata(view: EvaluationView, tolerances: Tolerances) -> dict[str, Any]:
    verdict, run, tested = view.verdict, view.run.result, view.run.tested
    held = gates(tolerances, run.cutoffs)
    metadata = {
        "verdict": verdict.sentence,
        "verdict_status": verdict.status,
        "is_regression": verdict.is_regression,
        "complete": run.complete,
        "has_baseline": verdict.has_baseline,
        "run_id": run.run_id,
        "labels": run.labels,
        "baseline_labels": view.baseline_labels or "none",
        "baseline_run_id": verdict.baseline_run_id or "none",
        **{f"{row.key}_change": view.change_text(row) for row in tested},
        **{gate.option: points(gate.tolerance) for gate in held if is_hit_rate(gate.figure)},
        **{f"{row.key}_p_value": p_value(row.p_value) for row in tested},
        "is_inconclusive": verdict.is_inconclusive,
        **_significance_metadata(view),
        "flipped_to_miss_count": str(len(view.flipped_to_miss)),
        "flipped_to_hit_count": str(len(view.flipped_to_hit)),
        "flipped_to_miss": _listed(view.flipped_to_miss),
        "flipped_to_hit": _listed(view.flipped_to_hit),
        "unjudged_lost_hit_count": str(len(view.unjudged_lost_hits)),
        "unjudged_lost_hits": _listed(view.unjudged_lost_hits),
    }
    for breakdown in view.run.slices:
        if breakdown.changes:
            metadata[f"by_{breakdown.name}_deltas"] = _delta_table(breakdown)
    for name in ("max_p95_latency_increase_ms", "min_significance", "max_unjudged_share"):
        value = getattr(tolerances, name)
        if value is not None:
            metadata[name] = milliseconds(value) if name.endswith("_ms") else as_written(value)
    metadata.update({gate.option: as_written(gate.tolerance) for gate in held if not is_hit_rate(gate.figure)})
    if view.latency_change is not None:
        metadata["p95_latency_change"] = view.latency_change_text
    if view.set_changes is not None:
        metadata.update(_set_change_metadata(view.set_changes))
    if view.excluded_unstable:
        metadata["excluded_unstable_questions"] = _listed(view.excluded_unstable)
    if not run.complete:
        metadata["errored_question_count"] = str(len(run.errored_question_ids))
        metadata["errored_questions"] = _listed(run.errored_question_ids)
    return metadata


def _listed(ids) -> list:
    return list(ids[:MAX_LISTED_QUESTIONS])


def _set_change_metadata(changes: SetChanges) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "set_changes": changes.sentence(),
        "compared_questions": str(changes.compared),
    }
    edits = (("added", changes.added), ("removed", changes.removed), ("relabelled", changes.relabelled))
    for name, ids in (*edits, ("rescored", changes.rescored)):
        metadata[f"{name}_questions"] = _listed(ids)
    if changes.rescore_sentence:
        metadata["baseline_rescoring"] = changes.rescore_sentence
    if changes.not_rescored_questions:
        metadata["not_rescored_questions"] = Json(
            [{"question_id": i, "reason": why} for i, why in changes.not_rescored_questions[:MAX_LISTED_QUESTIONS]]
        )
    return metadata


def _delta_table(breakdown: Breakdown) -> Table:
    rows = (
        {"key": c.key, "questions": c.questions, **{f"{d.figure.key}_change": d.text for d in c.deltas}}
        for c in breakdown.changes
    )
    return table(DELTA_COLUMNS, rows)


def _significance_metadata(view: EvaluationView) -> dict[str, Any]:
    """Per-slice paired tests with Holm-corrected p-values, the smallest drop the set could detect and the
    ranking-metric changes; every figure text, as its measure reads ("-0.040" says more than a raw float)."""
    tests = view.slice_tests
    if not tests.rows:
        return {}
    metadata: dict[str, Any] = {
        "significance": as_written(tests.significance),
        "slice_tests": table(SLICE_TEST_COLUMNS, (row.cells for row in tests.rows)),
        "surviving_differences": len(tests.surviving),
        **{f"{row.key}_change": row.checked_text for row in view.run.ranking_changes},
    }
    drop = view.minimum_detectable_drop
    too_small = "none: the set is too small for any drop to be significant"
    return metadata | {"minimum_detectable_drop": too_small if drop is None else points(drop)}


def pair_verdicts_metadata(verdicts: PairVerdicts) -> dict[str, Any]:
    """Each failed pair with its verdict, the pairs flagged WARN, and every pair's latest stored verdict."""
    failed = verdicts.failed
    pairs = (
        {
            "set": v.set_identifier,
            "retriever": v.retriever_identifier,
            "verdict": v.status,
            "sentence": v.sentence,
            "run_id": v.run_id or "",
        }
        for v in verdicts.verdicts
    )
    return {
        "failed_pairs": "; ".join(f"{v.pair} ({v.status}): {v.sentence}" for v in failed) or "none",
        "failed_pair_count": f"{len(failed)} of {len(verdicts.verdicts)}",
        "flagged_pairs": ", ".join(f"{v.pair} ({v.status})" for v in verdicts.warned) or "none",
        "pairs": table(PAIRS_COLUMNS, pairs),
    }
