"""The Dagster side of `retrieval-eval nightly` (cli/nightly.py): every partition of the code location, one
run each, through the jobs the schedule and the sensors use, on the given instance.

Order: the dense retrievers' shards, the sets, the retrievers, then the evaluations whose set and retriever
built, then what declarative automation refreshes on a deployment (the leaderboard, each set's label
audit and generated questions' agreement, the query logs and their coverage). A partition's outcome is the
error its run raised, if any, and for an evaluation the run the core saved in the result store: its rates
and its stored verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from dagster import DagsterExecutionInterruptedError, DagsterInstance, Definitions

from retrieval_pipeline.core.base.errors import RetrievalEvalError, ServiceFailedError
from retrieval_pipeline.core.services.views.evaluation_view import RegressionCheck, regression_check
from retrieval_pipeline.core.storage.run_summary import RunSummary
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.dagster_layer.assets import CheckFailed
from retrieval_pipeline.dagster_layer.definitions import (
    EVALUATION_JOB,
    GENERATED_AGREEMENT_JOB,
    LABEL_AUDIT_JOB,
    LEADERBOARD_JOB,
    RETRIEVERS_JOB,
    SETS_JOB,
)
from retrieval_pipeline.dagster_layer.document_vectors import VECTORS_JOB, shard_partitions
from retrieval_pipeline.dagster_layer.partitions import ProjectPartitions, project_partitions
from retrieval_pipeline.dagster_layer.resources import RetrievalProject
from retrieval_pipeline.dagster_layer.traffic.coverage import COVERAGE_JOB, QUERY_LOG_JOB, coverage_key

QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
"""Each failure is one line here (its message); the run's event log keeps its traceback for the UI."""


@dataclass(frozen=True)
class PartitionOutcome:
    job: str
    partition: str
    error: BaseException | None = None
    set_identifier: str | None = None
    retriever_identifier: str | None = None
    run: RunSummary | None = None
    """An evaluation's run, as the core saved it in the result store."""
    check: RegressionCheck | None = None

    @property
    def success(self) -> bool:
        return self.error is None

    @property
    def message(self) -> str:
        return str(self.error) or type(self.error).__name__ if self.error is not None else ""

    @property
    def service_error(self) -> bool:
        return isinstance(self.error, ServiceFailedError)

    @property
    def input_error(self) -> bool:
        """Invalid input, or a set whose labels check failed."""
        return isinstance(self.error, (RetrievalEvalError, CheckFailed)) and not self.service_error

    @property
    def check_passed(self) -> bool | None:
        return self.check.passed if self.check is not None else None


@dataclass(frozen=True)
class Skipped:
    """An evaluation not run because its set or retriever failed."""

    label: str


def run_every_partition(defs: Definitions, instance: DagsterInstance, on_outcome: Callable) -> None:
    """`on_outcome` receives each PartitionOutcome (and each Skipped evaluation) as it is known. Ctrl-C
    inside a run fails that run in Dagster and comes back here as KeyboardInterrupt."""
    project: RetrievalProject = defs.resources["project"]
    config, store = project.config, ResultStore(project.resolved_store_uri)
    partitions = project_partitions(config, source=project.config_path)
    shards = shard_partitions(config)
    broken: set[str] = set()
    for key in shards.keys() if shards else []:
        outcome = _run(defs, instance, VECTORS_JOB, key)
        if not outcome.success:
            broken.add(shards.shard(key)[0])
        on_outcome(outcome)
    for job, keys in ((SETS_JOB, partitions.set_identifiers), (RETRIEVERS_JOB, partitions.retriever_identifiers)):
        for key in keys:
            outcome = _run(defs, instance, job, key)
            if not outcome.success:
                broken.add(key)
            on_outcome(outcome)
    for key in partitions.evaluation_keys():
        pair = partitions.dimensions(key)
        if broken & set(pair):
            on_outcome(Skipped(" × ".join(pair)))
        else:
            on_outcome(_evaluated(_run(defs, instance, EVALUATION_JOB, key), pair, store, config.dagster.check_severity))
    for job, key in _refreshed(partitions, project):
        on_outcome(_run(defs, instance, job, key))


def _refreshed(partitions: ProjectPartitions, project: RetrievalProject) -> Iterator[tuple[str, str | None]]:
    yield LEADERBOARD_JOB, None
    yield from ((job, s) for s in partitions.set_identifiers for job in (LABEL_AUDIT_JOB, GENERATED_AGREEMENT_JOB))
    logs = list(project.config.query_logs)
    yield from ((QUERY_LOG_JOB, log) for log in logs)
    yield from ((COVERAGE_JOB, coverage_key(s, log)) for log in logs for s in partitions.set_identifiers)


def _run(defs: Definitions, instance: DagsterInstance, job: str, key) -> PartitionOutcome:
    try:
        defs.resolve_job_def(job).execute_in_process(
            instance=instance, partition_key=key, run_config=QUIET_RUN_CONFIG, raise_on_error=True
        )
    except DagsterExecutionInterruptedError:
        raise KeyboardInterrupt from None
    except Exception as error:
        return PartitionOutcome(job, str(key or ""), error)
    return PartitionOutcome(job, str(key or ""))


def _evaluated(outcome: PartitionOutcome, pair: tuple[str, str], store: ResultStore, severity: str) -> PartitionOutcome:
    """The run the core saved for `pair` in this run: a failed check (CheckFailed) is its verdict, no error."""
    outcome = replace(outcome, set_identifier=pair[0], retriever_identifier=pair[1])
    if outcome.error is not None and not isinstance(outcome.error, CheckFailed):
        return outcome
    key = HistoryKey(*pair)
    saved = next(iter(store.history(key)), None)
    if saved is None:
        return outcome
    run = RunSummary.of(key, store.read_summary(saved))
    check = regression_check(run.verdict, severity) if run.verdict else None
    return replace(outcome, error=None, run=run, check=check)
