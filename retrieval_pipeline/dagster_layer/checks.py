"""The regression check on `retrieval_evaluation`: tolerances applied against the partition's previous run.

Evaluated by the evaluation's own step, from the report the core's `evaluate_and_record` returns: the
core reads the baseline before it saves the new run, so the check and the stored history can never
disagree, and no second comparison exists to drift from it. An incomplete run fails (it cannot be
compared); too few unchanged questions since the baseline (`tolerances.min_compared_questions`) pass
with severity WARN: failing would block every run of a reworked set. The spec carries the partitions
definition (a preview feature), so the UI shows the check per (set, retriever) partition.
"""

from __future__ import annotations

from dagster import AssetCheckResult, AssetCheckSeverity, AssetCheckSpec, AssetKey, PartitionsDefinition

from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.services.evaluation.record import Evaluation
from retrieval_pipeline.core.services.views.evaluation_view import evaluation_view, regression_check
from retrieval_pipeline.dagster_layer.metadata.regression import regression_metadata
from retrieval_pipeline.dagster_layer.metadata.values import typed
from retrieval_pipeline.dagster_layer.partitions import partitioned_check

CHECK_NAME = "no_regression"


def regression_check_spec(evaluation: AssetKey, partitions_def: PartitionsDefinition) -> AssetCheckSpec:
    return partitioned_check(
        CHECK_NAME,
        evaluation,
        partitions_def,
        description=f"{' and '.join(figure.title for figure in TESTED).capitalize()} hit rates dropped no more than "
        "the configured tolerances since the "
        "previous run of this set and retriever; an incomplete run (retriever errors) fails. With "
        "tolerances.min_significance, a drop the set cannot tell from noise passes with severity WARN; with "
        "tolerances.max_unjudged_share, so does a drop whose lost hits mostly have unjudged documents in their place.",
    )


def regression_check_result(evaluation: Evaluation, tolerances: Tolerances, severity: str = "ERROR") -> AssetCheckResult:
    view = evaluation_view(evaluation)
    check = regression_check(view.verdict.status, severity)
    return AssetCheckResult(
        check_name=CHECK_NAME,
        passed=check.passed,
        # Not comparable, or a drop the set cannot tell from noise: passed, flagged WARN (the description says why).
        severity=AssetCheckSeverity(check.severity),
        description=view.verdict.sentence,
        metadata=typed(regression_metadata(view, tolerances)),
    )
