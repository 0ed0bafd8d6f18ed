"""One run's outcome for `retrieval-eval nightly`, read from its Dagster events: the same reading whether
the run executed in this process or on a worker (`--launch`), so both print and exit alike."""

from __future__ import annotations

from collections.abc import Iterable

from retrieval_pipeline.dagster_layer.nightly_report import PartitionOutcome

INPUT_ERRORS = frozenset(
    {"RetrievalEvalError", "InvalidInputError", "UnknownIdentifierError", "DuplicateIdentifierError", "StoreError"}
)


def outcome_from_events(job_name: str, partition_key: str | None, success: bool, events: Iterable) -> PartitionOutcome:
    """`events` are DagsterEvents: a result's `all_events`, or the instance's event log of a launched run."""
    from dagster import DagsterEventType

    from retrieval_pipeline.dagster_layer.checks import CHECK_NAME

    outcome = PartitionOutcome(job=job_name, partition=str(partition_key or ""), success=success)
    step_errors, run_errors = [], []
    for event in events:
        if event.event_type == DagsterEventType.ASSET_MATERIALIZATION:
            metadata = event.step_materialization_data.materialization.metadata
            if "top1_hit_rate" in metadata:
                outcome.top1_hit_rate = metadata["top1_hit_rate"].value
                outcome.top3_hit_rate = metadata["top3_hit_rate"].value
        elif event.event_type == DagsterEventType.ASSET_CHECK_EVALUATION:
            evaluation = event.asset_check_evaluation_data
            if evaluation.asset_check_key.name != CHECK_NAME:  # the set's labels_exist check
                continue
            outcome.check_passed = evaluation.passed
            outcome.check_severity = evaluation.severity.value
            outcome.verdict = evaluation.description
            outcome.complete = evaluation.metadata["complete"].value
            outcome.is_regression = evaluation.metadata["is_regression"].value
        elif event.event_type == DagsterEventType.STEP_FAILURE:
            step_errors.append(event.step_failure_data.error)
        elif event.event_type == DagsterEventType.RUN_FAILURE and event.event_specific_data is not None:
            run_errors.append(event.event_specific_data.error)
    if not success:
        names, outcome.error = _failure(next((e for e in step_errors + run_errors if e is not None), None))
        outcome.input_error = bool(names & INPUT_ERRORS)
    return outcome


def _failure(error) -> tuple[set[str], str]:
    """The class names along the error's cause chain, and the innermost message (the user's error)."""
    names, message = set(), "the run failed"
    while error is not None:
        names.add(error.cls_name)
        text = error.message.strip()
        if text:  # "package.module.ClassName: what happened" -> "what happened"
            message = text.split(f"{error.cls_name}: ", 1)[-1].strip()
        error = error.cause
    return names, message
