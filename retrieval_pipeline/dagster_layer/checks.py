"""The regression check on `retrieval_evaluation`: tolerances applied against the partition's previous run.

The check is evaluated by the evaluation asset itself, in the same step, from the report the core's
`evaluate_and_record` returns (run alone, from the partition's latest stored run: assets.py): the core reads the baseline (the latest complete stored run of the same
set and retriever, i.e. the previous materialization of this partition) before it saves the new run, so
the check and the stored history can never disagree, and no second comparison exists to drift from it.

An incomplete run (the retriever failed on some questions) fails the check: it is stored for
inspection but cannot be compared, so "no regression" cannot be claimed for it. The materialization
itself still succeeds, so the per-question table with the errors stays visible in the UI.

When the set changed since the baseline the comparison covers the unchanged questions only, and the
metadata says what changed (`set_changes`). Too few of them (`tolerances.min_compared_questions`): the
check passes with severity WARN, saying the runs are not comparable; there was no regression to find,
and failing would block every run of a reworked set. Under `baseline_policy: accepted` a failed run is
not the next baseline, so the check keeps failing until someone runs the `accept_baseline` job.

The spec carries the evaluation's partitions definition (a preview feature in Dagster 1.13), so each
result is recorded against its (set, retriever) partition and the UI shows the check per partition.
"""

from __future__ import annotations

from typing import Any

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    MetadataValue,
    PartitionsDefinition,
    TableColumn,
    TableSchema,
)

from retrieval_pipeline.core.base.formatting import as_written, milliseconds, p_value, points
from retrieval_pipeline.core.scoring.measures import TESTED, gated_figures
from retrieval_pipeline.core.scoring.metric_gates import ranking_gate_options
from retrieval_pipeline.core.scoring.set_versions import SetChanges
from retrieval_pipeline.core.scoring.tolerances import Tolerances
from retrieval_pipeline.core.services.evaluation import Evaluation
from retrieval_pipeline.core.services.views.breakdowns import Breakdown
from retrieval_pipeline.core.services.views.evaluation_view import EvaluationView, evaluation_view, regression_check
from retrieval_pipeline.core.services.views.figure_rows import is_hit_rate
from retrieval_pipeline.dagster_layer.metadata import table
from retrieval_pipeline.dagster_layer.partitions import partitioned_check

CHECK_NAME = "no_regression"
EVALUATION_ASSET = "retrieval_evaluation"
MAX_LISTED_QUESTIONS = 200

DELTA_SCHEMA = TableSchema(
    columns=[
        TableColumn("key", "string"),
        TableColumn("questions", "int", description="Questions in this group in the current run"),
        *[
            TableColumn(
                f"{figure.key}_change", "string", description=f"{figure.title.capitalize()} hit rate change, percentage points"
            )
            for figure in TESTED
        ],
    ]
)


def regression_check_spec(partitions_def: PartitionsDefinition) -> AssetCheckSpec:
    return partitioned_check(
        CHECK_NAME,
        EVALUATION_ASSET,
        partitions_def,
        description=f"{' and '.join(figure.title for figure in TESTED).capitalize()} hit rates dropped no more than "
        "the configured tolerances since the "
        "previous run of this set and retriever; an incomplete run (retriever errors) fails. With "
        "tolerances.min_significance, a drop the set cannot tell from noise passes with severity WARN; with "
        "tolerances.max_unjudged_share, so does a drop whose lost hits mostly have unjudged documents in their place.",
    )


def regression_check_result(evaluation: Evaluation, tolerances: Tolerances, severity: str = "ERROR") -> AssetCheckResult:
    view = evaluation_view(evaluation)
    verdict, run, tested = view.verdict, view.run.result, view.run.tested
    # Text, not numbers: the UI would plot numbers across every partition as one zig-zagging line; the
    # pair's own history is the evaluation's `history_chart`.
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
        **{option: points(getattr(tolerances, option)) for figure, option in gated_figures(run.cutoffs) if is_hit_rate(figure)},
        **{f"{row.key}_p_value": p_value(row.p_value) for row in tested},
        "is_inconclusive": verdict.is_inconclusive,
        **_significance_metadata(view),
        "flipped_to_miss_count": str(len(view.flipped_to_miss)),
        "flipped_to_hit_count": str(len(view.flipped_to_hit)),
        "flipped_to_miss": list(view.flipped_to_miss[:MAX_LISTED_QUESTIONS]),
        "flipped_to_hit": list(view.flipped_to_hit[:MAX_LISTED_QUESTIONS]),
        "unjudged_lost_hit_count": str(len(view.unjudged_lost_hits)),
        "unjudged_lost_hits": list(view.unjudged_lost_hits[:MAX_LISTED_QUESTIONS]),
    }
    for breakdown in (view.run.by_form, view.run.by_hard_class):
        if breakdown.changes:
            metadata[f"by_{breakdown.name}_deltas"] = _delta_table(breakdown)
    for name in ("max_p95_latency_increase_ms", "min_significance", "max_unjudged_share", *ranking_gate_options()):
        value = getattr(tolerances, name)
        if value is not None:
            metadata[name] = milliseconds(value) if name.endswith("_ms") else as_written(value)
    if view.latency_change is not None:
        metadata["p95_latency_change"] = view.latency_change_text
    if view.set_changes is not None:
        metadata.update(_set_change_metadata(view.set_changes))
    if view.excluded_unstable:
        metadata["excluded_unstable_questions"] = list(view.excluded_unstable[:MAX_LISTED_QUESTIONS])
    if not run.complete:
        metadata["errored_question_count"] = str(len(run.errored_question_ids))
        metadata["errored_questions"] = list(run.errored_question_ids[:MAX_LISTED_QUESTIONS])
    check = regression_check(verdict.status, severity)
    return AssetCheckResult(
        check_name=CHECK_NAME,
        passed=check.passed,
        # Not comparable, or a drop the set cannot tell from noise: passed, flagged WARN (the description says why).
        severity=AssetCheckSeverity(check.severity),
        description=verdict.sentence,
        metadata=metadata,
    )


def _set_change_metadata(changes: SetChanges) -> dict[str, Any]:
    metadata = {
        "set_changes": changes.sentence(),
        "compared_questions": str(changes.compared),
    }
    edits = (("added", changes.added), ("removed", changes.removed), ("relabelled", changes.relabelled))
    for name, ids in (*edits, ("rescored", changes.rescored)):
        metadata[f"{name}_questions"] = list(ids[:MAX_LISTED_QUESTIONS])
    if changes.rescore_sentence:
        metadata["baseline_rescoring"] = changes.rescore_sentence
    if changes.not_rescored_questions:
        metadata["not_rescored_questions"] = MetadataValue.json(
            [{"question_id": i, "reason": why} for i, why in changes.not_rescored_questions[:MAX_LISTED_QUESTIONS]]
        )
    return metadata


def _delta_table(breakdown: Breakdown) -> MetadataValue:
    rows = (
        {"key": c.key, "questions": c.questions, **{f"{d.figure.key}_change": d.text for d in c.deltas}}
        for c in breakdown.changes
    )
    return table(DELTA_SCHEMA, rows)


SLICE_TEST_SCHEMA = TableSchema(
    columns=[
        TableColumn("slice", "string", description="overall, form or hard_class"),
        TableColumn("key", "string"),
        TableColumn("measure", "string", description="The figure compared: top1, top3, mrr@10, ..."),
        TableColumn("k", "int", description="Cut-off"),
        TableColumn("questions", "int"),
        TableColumn("change", "string", description="Change: percentage points for a hit rate, the score for a ranking measure"),
        TableColumn("delta_95_ci", "string", description="95% bootstrap interval of the change (ranking measures)"),
        TableColumn("p_value", "string", description="Uncorrected: exact McNemar (hit rates), paired randomization (ranking)"),
        TableColumn("corrected_p_value", "string", description="Holm-corrected over every test of the table"),
        TableColumn("survives", "bool", description="Corrected p-value at or below the significance level"),
    ]
)


def _significance_metadata(view: EvaluationView) -> dict[str, Any]:
    """Per-slice paired tests with Holm-corrected p-values, the smallest drop the set could detect and the
    ranking-metric changes; every figure text, as its measure reads ("-0.040" says more than a raw float)."""
    tests = view.slice_tests
    if not tests.rows:
        return {}
    metadata: dict[str, Any] = {
        "significance": as_written(tests.significance),
        "slice_tests": table(SLICE_TEST_SCHEMA, (row.cells for row in tests.rows)),
        "surviving_differences": len(tests.surviving),
        **{f"{row.key}_change": row.checked_text for row in view.run.ranking_changes},
    }
    drop = view.minimum_detectable_drop
    too_small = "none: the set is too small for any drop to be significant"
    return metadata | {"minimum_detectable_drop": too_small if drop is None else points(drop)}
