"""The Dagster side of `retrieval-eval nightly` (cli/nightly.py): every partition of the code location,
run through the jobs the schedule and the sensor use.

Where the schedule runs one partition per run, nightly runs each stage as one run over the range of its
partitions (partition_steps.py): a run's bookkeeping is paid once per stage, not once per partition.
With `--launch` the partitions are submitted through the team's webserver instead, one run each so that the
workers share them (launch.py). Either way a partition's outcome is its run's failure, if any, and for
an evaluation the run the core saved in the result store (run_outcomes.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from retrieval_pipeline.dagster_layer.dagster_gaps import partition_range_tags
from retrieval_pipeline.dagster_layer.interruption import InterruptWatch, settle
from retrieval_pipeline.dagster_layer.run_outcomes import PartitionOutcome, RunFailure, evaluated

LAUNCHED_INTERRUPTED = (
    "interrupted (Ctrl-C): stopped waiting; the runs already submitted go on on the instance's workers, each "
    "recording its own partition (see the Dagster UI)"
)
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
"""Each failure is one line here (its message); Dagster's own console log would add its traceback, which
the run's event log keeps for the UI."""


class NightlyInterrupted(Exception):
    """Ctrl-C, once the store agrees with the instance; the message says what was finished."""


@dataclass(frozen=True)
class Skipped:
    """An evaluation not run because its set or retriever failed."""

    label: str


def partition_keys(defs) -> dict[str, list[str]]:
    return {
        asset: defs.resolve_assets_def(asset).partitions_def.get_partition_keys()
        for asset in ("golden_question_set", "retriever_config")
    }


def run_stages(defs, instance, project, on_outcome: Callable, *, launch: str | None = None, console=None) -> None:
    """Every partition in-process, or through the instance's launcher when `launch` names the webserver's
    URL; `on_outcome` receives each PartitionOutcome (and each Skipped evaluation) as it is known."""
    from retrieval_pipeline.core.scoring.results import utc_now
    from retrieval_pipeline.core.storage.store import ResultStore

    keys, started = partition_keys(defs), utc_now()
    store = ResultStore(project.resolved_store_uri)
    severity = project.config.dagster.check_severity

    def on_evaluation(outcome: PartitionOutcome, pair: tuple[str, str]) -> None:
        on_outcome(evaluated(outcome, pair, store, started, severity))

    try:
        if launch is None:
            with InterruptWatch() as watch:
                _run_all(defs, project, _in_process(defs, instance, watch), on_outcome, on_evaluation)
        else:
            from retrieval_pipeline.dagster_layer.launch import RunSubmitter

            submitter = RunSubmitter(instance, launch, defs, console)
            submitter.check_partitions(keys)
            console.print(f"Launching on the instance's run launcher (tag retrieval_pipeline/launch={submitter.launch_id})")
            _run_all(defs, project, submitter, on_outcome, on_evaluation)
    except KeyboardInterrupt:
        if launch is not None:
            raise NightlyInterrupted(LAUNCHED_INTERRUPTED) from None
        pairs = [(s, r) for s in keys["golden_question_set"] for r in keys["retriever_config"]]
        raise NightlyInterrupted(settle(instance, store, pairs, started).sentence()) from None


def _run_all(defs, project, run_batch, on_outcome: Callable, on_evaluation: Callable) -> None:
    """The dense retrievers' shards (one run each, so each is its own step), sets and retrievers, then the
    evaluations whose set and retriever built, then the leaderboard. `run_batch(requests, title)` runs
    (job, partition keys) requests, each a key range or `[None]`, and yields each partition's outcome as
    its run finishes."""
    from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, LEADERBOARD_JOB, RETRIEVERS_JOB, SETS_JOB
    from retrieval_pipeline.dagster_layer.document_vectors import shard_requests
    from retrieval_pipeline.dagster_layer.partitions import ProjectPartitions

    keys = partition_keys(defs)
    partitions = ProjectPartitions(tuple(keys["golden_question_set"]), tuple(keys["retriever_config"]))
    broken: set[str] = set()
    requests, retriever_of = shard_requests(project.config)
    for outcome in run_batch(requests, "document vectors"):
        if not outcome.success:
            broken.add(retriever_of(outcome.partition))
        on_outcome(outcome)
    inputs = [(SETS_JOB, list(partitions.set_identifiers)), (RETRIEVERS_JOB, list(partitions.retriever_identifiers))]
    for outcome in run_batch(inputs, "sets and retrievers"):
        if not outcome.success:
            broken.add(outcome.partition)
        on_outcome(outcome)
    for key in partitions.evaluation_keys():
        if broken & set(partitions.dimensions(key)):
            on_outcome(Skipped(" × ".join(partitions.dimensions(key))))
    evaluations = [(EVALUATION_JOB, keys) for keys in partitions.evaluation_ranges(broken)]
    for outcome in run_batch(evaluations, "evaluations"):
        on_evaluation(outcome, partitions.dimensions(outcome.partition))
    for outcome in run_batch([(LEADERBOARD_JOB, [None])], "leaderboard"):
        on_outcome(outcome)


def _in_process(defs, instance, watch: InterruptWatch):
    """`run_batch` for `_run_all`: one run here for each request, the whole range at once (the stage's
    bookkeeping is paid once, not once per partition)."""

    def run_batch(requests, title):
        for job_name, keys in requests:
            where = {"partition_key": keys[0]} if len(keys) == 1 else {"tags": partition_range_tags(str(keys[0]), str(keys[-1]))}
            result = defs.resolve_job_def(job_name).execute_in_process(
                instance=instance, raise_on_error=False, run_config=QUIET_RUN_CONFIG, **where
            )
            failure = RunFailure.of(result.all_events)
            watch.raise_if_interrupted(failure.interrupted)
            yield from failure.outcomes(job_name, keys, result.success)

    return run_batch
