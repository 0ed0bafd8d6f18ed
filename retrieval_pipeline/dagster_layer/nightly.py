"""The Dagster side of `retrieval-eval nightly` (cli/nightly.py): every partition of the code location's
asset jobs, one run each, on the given instance, in the order of the asset graph.

The graph gives the order: each level holds the assets whose upstream assets are all in earlier levels
(the shards, sets, retrievers and query logs; then the evaluations and coverage; then the leaderboard,
the label audits and the generated questions' agreement, what declarative automation refreshes on a
deployment). A partition whose direct upstream partition failed is skipped (an evaluation whose set or
retriever did not build). A runner runs a level's partitions: in this process (`InProcessRuns`), or
launched through the instance against the code location (`launched_runs.LaunchedRuns`), which gives each
run the origin the UI re-executes. A partition's outcome is its run's error, if any, and for an
evaluation the run the core saved in the result store: its rates and its stored verdict.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from graphlib import TopologicalSorter
from typing import Protocol

from dagster import AssetKey, DagsterEventType, DagsterExecutionInterruptedError, DagsterInstance, Definitions, MultiPartitionKey

from retrieval_pipeline.core.base.errors import RetrievalEvalError, ServiceFailedError
from retrieval_pipeline.core.services.views.evaluation_view import RegressionCheck, regression_check
from retrieval_pipeline.core.storage.run_summary import RunSummary
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.dagster_layer.assets import CheckFailed
from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB
from retrieval_pipeline.dagster_layer.partitions import named_dimensions, project_partitions
from retrieval_pipeline.dagster_layer.resources import RetrievalProject

QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
"""Each failure is one line here (its message); the run's event log keeps its traceback for the UI."""


@dataclass(frozen=True)
class PartitionRun:
    """One run to make: a job and, for a partitioned job, one of its partitions."""

    job: str
    key: str | MultiPartitionKey | None = None

    @property
    def partition(self) -> str:
        return str(self.key or "")

    def dimensions(self) -> dict[str | None, str]:
        return named_dimensions(self.key)


@dataclass(frozen=True)
class PartitionOutcome:
    request: PartitionRun
    error_type: type[BaseException] | None = None
    """The class of the exception the run raised (None: it succeeded)."""
    message: str = ""
    set_identifier: str | None = None
    retriever_identifier: str | None = None
    run: RunSummary | None = None
    """An evaluation's run, as the core saved it in the result store."""
    check: RegressionCheck | None = None

    @classmethod
    def failed(cls, request: PartitionRun, error_type: type[BaseException], message: str) -> PartitionOutcome:
        return cls(request, error_type, message or error_type.__name__)

    @property
    def job(self) -> str:
        return self.request.job

    @property
    def partition(self) -> str:
        return self.request.partition

    @property
    def success(self) -> bool:
        return self.error_type is None

    @property
    def service_error(self) -> bool:
        return self.error_type is not None and issubclass(self.error_type, ServiceFailedError)

    @property
    def input_error(self) -> bool:
        """Invalid input, or a set whose labels check failed."""
        failed = self.error_type is not None and issubclass(self.error_type, (RetrievalEvalError, CheckFailed))
        return failed and not self.service_error

    @property
    def canceled(self) -> bool:
        """Ended before it finished, by Ctrl-C or by someone canceling it in the UI: the night is incomplete."""
        return self.error_type is not None and issubclass(self.error_type, KeyboardInterrupt)

    @property
    def check_passed(self) -> bool | None:
        return self.check.passed if self.check is not None else None


@dataclass(frozen=True)
class Skipped:
    """A partition not run because a partition it depends on failed."""

    label: str


class Runner(Protocol):
    def run(self, requests: Sequence[PartitionRun]) -> Iterator[PartitionOutcome]:
        """Each request's outcome, as each run ends; Ctrl-C ends the runs in progress, then propagates."""

    def stop(self) -> Iterator[PartitionOutcome]:
        """After Ctrl-C: the runs in progress ended, and the outcomes of those that finished meanwhile."""


class InProcessRuns:
    """Each run executed in this process, one after another (`nightly --in-process`: no code location,
    so the UI shows the runs but cannot re-execute them)."""

    def __init__(self, defs: Definitions, instance: DagsterInstance):
        self.defs, self.instance = defs, instance
        self.interrupted: list[PartitionOutcome] = []

    def run(self, requests: Sequence[PartitionRun]) -> Iterator[PartitionOutcome]:
        for request in requests:
            yield self._run(request)

    def stop(self) -> Iterator[PartitionOutcome]:
        """One run at a time: the one Ctrl-C reached is reported if it had recorded its asset before it
        ended (Ctrl-C between its materialization and the run's end); none other ran meanwhile."""
        return iter(self.interrupted)

    def _run(self, request: PartitionRun) -> PartitionOutcome:
        run_id = str(uuid.uuid4())
        try:
            self.defs.resolve_job_def(request.job).execute_in_process(
                instance=self.instance,
                partition_key=request.key,
                run_config=QUIET_RUN_CONFIG,
                raise_on_error=True,
                run_id=run_id,
            )
        except (KeyboardInterrupt, DagsterExecutionInterruptedError):
            self._canceled(run_id)
            if self._recorded(run_id):
                self.interrupted.append(PartitionOutcome(request))
            raise KeyboardInterrupt from None
        except Exception as error:
            return PartitionOutcome.failed(request, type(error), str(error))
        return PartitionOutcome(request)

    def _canceled(self, run_id: str) -> None:
        """Dagster fails a run interrupted in a step; one interrupted before its steps began (its run record
        made, not started) would stay NOT_STARTED, its partition "Materializing" for good: it ends CANCELED."""
        run = self.instance.get_run_by_id(run_id)
        if run is not None and not run.is_finished:
            self.instance.report_run_canceled(run, message="Interrupted (Ctrl-C) before its steps began.")

    def _recorded(self, run_id: str) -> bool:
        recording = {DagsterEventType.ASSET_MATERIALIZATION, DagsterEventType.ASSET_CHECK_EVALUATION}
        return bool(self.instance.get_records_for_run(run_id, of_type=recording, limit=1).records)


def project_of(defs: Definitions) -> tuple[str, RetrievalProject]:
    """The project resource and its key, whatever name the definitions give it."""
    return next((key, value) for key, value in (defs.resources or {}).items() if isinstance(value, RetrievalProject))


def run_every_partition(defs: Definitions, runner: Runner, on_outcome: Callable) -> None:
    """`on_outcome` receives each PartitionOutcome (and each Skipped partition) as it is known."""
    _, project = project_of(defs)
    config, store = project.config, ResultStore(project.resolved_store_uri)
    partitions = project_partitions(config, source=project.config_path)
    upstream = upstream_assets(defs)
    failed: dict[AssetKey, list[PartitionRun]] = {}
    for level in graph_levels(defs):
        requests = []
        for asset, request in level:
            if _blocked(request, [f for key in upstream[asset] for f in failed.get(key, [])]):
                on_outcome(Skipped(_label(request, partitions)))
            else:
                requests.append((asset, request))
        assets = {request: asset for asset, request in requests}

        def ended(outcome: PartitionOutcome, assets: dict = assets) -> None:
            if not outcome.success:
                failed.setdefault(assets[outcome.request], []).append(outcome.request)
            if outcome.job == EVALUATION_JOB:
                outcome = _evaluated(outcome, partitions.dimensions(outcome.partition), store, config.dagster.check_severity)
            on_outcome(outcome)

        try:
            for outcome in runner.run(list(assets)):
                ended(outcome)
        except KeyboardInterrupt:
            for outcome in runner.stop():
                ended(outcome)
            raise


def upstream_assets(defs: Definitions) -> dict[AssetKey, set[AssetKey]]:
    return {spec.key: {dep.asset_key for dep in spec.deps} for spec in defs.resolve_all_asset_specs()}


def graph_levels(defs: Definitions) -> list[list[tuple[AssetKey, PartitionRun]]]:
    """Every partition of every asset job of one asset, grouped by the asset's level in the asset graph, in
    the order the definitions declare the assets."""
    upstream = upstream_assets(defs)
    jobs = {}
    for job in defs.jobs or []:
        selection = getattr(job, "selection", None)  # an asset job (define_asset_job), not an op job
        selected = selection.resolve(defs.assets) if selection is not None else set()
        if len(selected) == 1:
            jobs[next(iter(selected))] = job.name
    declared = _declared_order(defs)
    sorter = TopologicalSorter({key: upstream[key] & upstream.keys() for key in upstream})
    sorter.prepare()
    levels = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready(), key=lambda key: declared.get(key, len(declared)))
        sorter.done(*ready)
        level = [(asset, request) for asset in ready if asset in jobs for request in _partition_runs(defs, jobs[asset])]
        if level:
            levels.append(level)
    return levels


def _declared_order(defs: Definitions) -> dict[AssetKey, int]:
    """Each asset's place in the list the definitions were given (a dense retriever's shards before the
    retriever, so they encode first): Dagster's resolved specs come in no stable order across processes."""
    keys = [key for asset in defs.assets or [] for key in getattr(asset, "keys", None) or [asset.key]]
    return {key: index for index, key in enumerate(keys)}


def _partition_runs(defs: Definitions, job: str) -> list[PartitionRun]:
    partitions_def = defs.resolve_job_def(job).partitions_def
    if partitions_def is None:
        return [PartitionRun(job)]
    return [PartitionRun(job, key) for key in partitions_def.get_partition_keys()]


def _blocked(request: PartitionRun, failed_upstream: list[PartitionRun]) -> bool:
    """Whether a failed upstream partition is this partition's: the same key where one is plain, the same
    keys in every dimension they share where both have dimensions (a shard's retriever, an evaluation's)."""
    mine = request.dimensions()
    for failed in failed_upstream:
        theirs = failed.dimensions()
        if None in theirs:
            if theirs[None] in mine.values():
                return True
        elif (shared := mine.keys() & theirs.keys()) and all(mine[d] == theirs[d] for d in shared):
            return True
    return False


def _label(request: PartitionRun, partitions) -> str:
    if request.job == EVALUATION_JOB:
        return " × ".join(partitions.dimensions(request.key))
    return f"{request.job} [{request.partition}]"


def _evaluated(outcome: PartitionOutcome, pair: tuple[str, str], store: ResultStore, severity: str) -> PartitionOutcome:
    """The run the core saved for `pair` in this run: a failed check (CheckFailed) is its verdict, no error."""
    outcome = replace(outcome, set_identifier=pair[0], retriever_identifier=pair[1])
    if outcome.error_type is not None and not issubclass(outcome.error_type, CheckFailed):
        return outcome
    key = HistoryKey(*pair)
    saved = next(iter(store.history(key)), None)
    if saved is None:
        return outcome
    run = RunSummary.of(key, store.read_summary(saved))
    check = regression_check(run.verdict, severity) if run.verdict else None
    return replace(outcome, error_type=None, message="", run=run, check=check)
