"""One run's outcomes for `retrieval-eval nightly`, one per partition it held, read from its Dagster events:
the same reading whether the run executed in this process or on a worker (`--launch`), and whether it
held one partition or a range (partition_steps.py), so all of them print and exit alike."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

INPUT_ERRORS = frozenset(
    {"RetrievalEvalError", "InvalidInputError", "UnknownIdentifierError", "DuplicateIdentifierError", "StoreError"}
)
SERVICE_ERRORS = frozenset({"ServiceFailedError"})  # a service a retriever needs failed: exit 3, not a bug


@dataclass
class PartitionOutcome:
    job: str
    partition: str
    success: bool
    set_identifier: str | None = None
    retriever_identifier: str | None = None
    error: str | None = None
    input_error: bool = False
    service_error: bool = False  # a service the retriever needs failed while it was built
    check_passed: bool | None = None
    check_severity: str | None = None
    verdict: str | None = None
    complete: bool | None = None
    is_regression: bool | None = None
    hit_rates: dict = field(default_factory=dict)
    """The evaluation's tested hit rates (measures.TESTED), by Figure."""


def outcomes_from_events(
    job_name: str, partition_keys: Sequence[str | None], success: bool, events: Iterable
) -> list[PartitionOutcome]:
    """`events` are DagsterEvents: a result's `all_events`, or the instance's event log of a launched run.
    `partition_keys`: the partitions the run held, or `[None]` for an unpartitioned job."""
    from dagster import DagsterEventType

    from retrieval_pipeline.core.scoring.measures import TESTED
    from retrieval_pipeline.dagster_layer.checks import CHECK_NAME
    from retrieval_pipeline.dagster_layer.partition_steps import FAILED_PARTITIONS

    outcomes = {
        str(key or ""): PartitionOutcome(job=job_name, partition=str(key or ""), success=success) for key in partition_keys
    }
    failed_partitions, step_errors, run_errors = None, [], []
    for event in events:
        outcome = outcomes.get(str(event.partition or ""))
        if event.event_type == DagsterEventType.ASSET_MATERIALIZATION and outcome is not None:
            metadata = event.step_materialization_data.materialization.metadata
            outcome.hit_rates.update({rate: metadata[rate.column].value for rate in TESTED if rate.column in metadata})
        elif event.event_type == DagsterEventType.ASSET_CHECK_EVALUATION:
            evaluation = event.asset_check_evaluation_data
            outcome = outcomes.get(str(evaluation.partition or ""))
            if evaluation.asset_check_key.name != CHECK_NAME or outcome is None:  # the set's labels_exist check
                continue
            outcome.check_passed = evaluation.passed
            outcome.check_severity = evaluation.severity.value
            outcome.verdict = evaluation.description
            outcome.complete = evaluation.metadata["complete"].value
            outcome.is_regression = evaluation.metadata["is_regression"].value
        elif event.event_type == DagsterEventType.STEP_FAILURE:
            failure = event.step_failure_data
            step_errors.append(failure.error)
            if failure.user_failure_data is not None and FAILED_PARTITIONS in failure.user_failure_data.metadata:
                failed_partitions = failure.user_failure_data.metadata[FAILED_PARTITIONS].value
        elif event.event_type == DagsterEventType.RUN_FAILURE and event.event_specific_data is not None:
            run_errors.append(event.event_specific_data.error)
    if not success:
        names, message = _failure(next((e for e in step_errors + run_errors if e is not None), None))
        for key, outcome in outcomes.items():
            if failed_partitions is None:  # the run failed as a whole: every partition it held failed
                _failed(outcome, message, names)
            elif key in failed_partitions:
                record = failed_partitions[key]
                _failed(outcome, record["error"], set(record["error_classes"]))
            else:  # recorded before another partition of the same run failed
                outcome.success = True
    return list(outcomes.values())


def _failed(outcome: PartitionOutcome, message: str, class_names: set[str]) -> None:
    outcome.error = message
    outcome.service_error = bool(class_names & SERVICE_ERRORS)
    outcome.input_error = bool(class_names & INPUT_ERRORS) and not outcome.service_error


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
