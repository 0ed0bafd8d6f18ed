"""Running the project's jobs in-process on a test instance, one partition per run (as the schedule does)."""

from __future__ import annotations

from dagster import MultiPartitionKey

from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, LEADERBOARD_JOB, RETRIEVERS_JOB, SETS_JOB

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


def evaluation_key(set_identifier: str, retriever_identifier: str) -> MultiPartitionKey:
    return MultiPartitionKey({"set": set_identifier, "retriever": retriever_identifier})


def run_job(defs, instance, job_name: str, partition_key=None, raise_on_error: bool = True):
    return defs.resolve_job_def(job_name).execute_in_process(
        instance=instance, partition_key=partition_key, run_config=QUIET, raise_on_error=raise_on_error
    )


def evaluate(defs, instance, set_identifier: str, retriever_identifier: str, raise_on_error: bool = True):
    """`raise_on_error=False` for a pair expected to fail its check: the run fails, the partition is not materialized."""
    key = evaluation_key(set_identifier, retriever_identifier)
    return run_job(defs, instance, EVALUATION_JOB, key, raise_on_error=raise_on_error)


def failure_metadata(result):
    """The metadata of a failed run's step failure: a failed pair's figures (`CheckFailed`)."""
    failure = next(e for e in result.all_events if e.is_step_failure).step_failure_data
    return failure.user_failure_data.metadata


def materialize_everything(defs, instance, sets, retrievers) -> None:
    for set_identifier in sets:
        run_job(defs, instance, SETS_JOB, set_identifier)
    for retriever_identifier in retrievers:
        run_job(defs, instance, RETRIEVERS_JOB, retriever_identifier)
    for retriever_identifier in retrievers:
        for set_identifier in sets:
            evaluate(defs, instance, set_identifier, retriever_identifier)
    run_job(defs, instance, LEADERBOARD_JOB)


def only_materialization(result):
    events = result.get_asset_materialization_events()
    assert len(events) == 1, events
    return events[0].materialization


def only_check(result):
    evaluations = result.get_asset_check_evaluations()
    assert len(evaluations) == 1, evaluations
    return evaluations[0]
