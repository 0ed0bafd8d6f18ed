"""`retrieval-eval nightly --launch`: the same runs as in-process nightly, submitted to the team's instance.

One run per partition, created from the code location the workspace file names and submitted through
the instance in $DAGSTER_HOME (with the queued coordinator and the Celery run launcher, the daemon
dequeues them and a worker executes each); tagged runs rather than a backfill, which the daemon only
advances every 30 s. Dagster 1.13 has no public call that submits a run from outside the webserver; the
creation follows `dagster job launch`. Outcomes are read as in-process (run_outcomes.py), so printing
and exit codes match.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.dagster_layer.dagster_gaps import only_code_location, workspace_of_file
from retrieval_pipeline.dagster_layer.run_outcomes import PartitionOutcome, RunFailure
from retrieval_pipeline.dagster_layer.schedules import TRIGGER_TAG

LAUNCH_TAG = "retrieval_pipeline/launch"
POLL_SECONDS = 0.5
# A daemon that has not reported for this long is not dequeuing; Dagster's own staleness threshold.
DAEMON_STALE_SECONDS = 60


class RunSubmitter:
    """Creates and submits one run per (job, partition) and yields each outcome as its run finishes."""

    def __init__(self, instance, workspace, defs, console):
        self._instance, self._workspace, self._defs, self._console = instance, workspace, defs, console
        self._location, self._repository = only_code_location(workspace)
        self.launch_id = uuid.uuid4().hex[:12]

    def check_partitions(self, local_keys: dict[str, Sequence[str]]) -> None:
        """The code location must serve the configuration this command reads, or the report would lie."""
        from dagster import AssetKey

        for asset, keys in local_keys.items():
            remote = self._repository.asset_graph.get(AssetKey(asset)).partitions_def.get_partition_keys()
            if sorted(remote) != sorted(keys):
                raise InvalidInputError(
                    f"the code location '{self._location.name}' serves other {asset} partitions than this "
                    f"configuration ({', '.join(remote)}); give every process the same $RETRIEVAL_EVAL_CONFIG",
                    source="--launch",
                )

    def __call__(self, requests: Sequence[tuple[str, Sequence[str | None]]], title: str) -> Iterator[PartitionOutcome]:
        from dagster import DagsterRunStatus, RunsFilter
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        # One run per partition, ranges included: the workers share them.
        pending = {self._submit(job, key): (job, key) for job, keys in requests for key in keys}
        finished = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=self._console, transient=True) as progress:
            task = progress.add_task(f"{title}: queued on the instance, waiting for workers", total=len(pending))
            while pending:
                runs = self._instance.get_runs(filters=RunsFilter(run_ids=list(pending)))
                for run in (r for r in runs if r.status in finished):
                    job, key = pending.pop(run.run_id)
                    progress.advance(task)
                    events = [e.dagster_event for e in self._instance.all_logs(run.run_id) if e.dagster_event]
                    yield from RunFailure.of(events).outcomes(job, [key], run.status == DagsterRunStatus.SUCCESS)
                if pending:
                    time.sleep(POLL_SECONDS)

    def _submit(self, job_name: str, partition_key: str | None) -> str:
        job_def = self._defs.resolve_job_def(job_name)
        tags = {TRIGGER_TAG: "launch", LAUNCH_TAG: self.launch_id}
        if partition_key is not None:
            tags.update(job_def.get_tags_for_partition_key(partition_key, None))
        remote_job = self._repository.get_full_job(job_name)
        plan = self._location.get_execution_plan(
            remote_job, {}, step_keys_to_execute=None, known_state=None, instance=self._instance
        )
        run = self._instance.create_run(
            job_name=job_name,
            run_id=None,
            run_config={},
            resolved_op_selection=None,
            step_keys_to_execute=plan.execution_plan_snapshot.step_keys_to_execute,
            op_selection=None,
            status=None,
            root_run_id=None,
            parent_run_id=None,
            tags={**remote_job.tags, **tags},
            job_snapshot=remote_job.job_snapshot,
            execution_plan_snapshot=plan.execution_plan_snapshot,
            parent_job_snapshot=remote_job.parent_job_snapshot,
            remote_job_origin=remote_job.get_remote_origin(),
            job_code_origin=remote_job.get_python_origin(),
            asset_selection=None,
            asset_check_selection=None,
            asset_graph=self._repository.asset_graph,
        )
        return self._instance.submit_run(run.run_id, self._workspace).run_id


@contextmanager
def run_submitter(instance, workspace_file: Path, defs, console) -> Iterator[RunSubmitter]:
    """The workspace (its code servers) stays open while the runs are submitted and awaited."""
    if not workspace_file.is_file():
        raise InvalidInputError("no such workspace file; --launch needs the one the daemon uses", source=str(workspace_file))
    _require_a_dequeuing_daemon(instance)
    with workspace_of_file(instance, workspace_file) as workspace:
        yield RunSubmitter(instance, workspace, defs, console)


def _require_a_dequeuing_daemon(instance) -> None:
    """With the queued coordinator and no daemon, submitted runs would wait forever: say so instead."""
    from dagster import QueuedRunCoordinator

    if not isinstance(instance.run_coordinator, QueuedRunCoordinator):
        return
    beat = instance.get_daemon_heartbeats().get("QUEUED_RUN_COORDINATOR")
    if beat is None or time.time() - beat.timestamp > DAEMON_STALE_SECONDS:
        raise InvalidInputError(
            "the instance queues runs but no dagster-daemon has dequeued for it lately; start `dagster-daemon run`",
            source=f"{instance.root_directory}/dagster.yaml",
        )
