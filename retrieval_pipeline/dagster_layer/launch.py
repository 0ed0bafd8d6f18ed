"""`retrieval-eval nightly --launch`: the same runs as in-process nightly, submitted through the team's webserver.

One run per partition, submitted with Dagster's GraphQL client to the webserver, which creates it from
its code location and hands it to the instance's run coordinator (with the queued coordinator and the
Celery run launcher, the daemon dequeues it and a worker executes it); tagged runs rather than a
backfill, which the daemon only advances every 30 s. Outcomes are read from the instance in
$DAGSTER_HOME as in-process (run_outcomes.py), so printing and exit codes match.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Sequence
from urllib.parse import urlsplit

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.dagster_layer.run_outcomes import PartitionOutcome, RunFailure
from retrieval_pipeline.dagster_layer.schedules import TRIGGER_TAG

LAUNCH_TAG = "retrieval_pipeline/launch"
POLL_SECONDS = 0.5
# A daemon that has not reported for this long is not dequeuing; Dagster's own staleness threshold.
DAEMON_STALE_SECONDS = 60
PARTITION_KEYS_QUERY = """
query PartitionKeys($assetKey: AssetKeyInput!) {
  assetNodeOrError(assetKey: $assetKey) { ... on AssetNode { partitionKeys } }
}"""


class RunSubmitter:
    """Submits one run per (job, partition) and yields each outcome as its run finishes."""

    def __init__(self, instance, webserver: str, defs, console):
        _require_a_dequeuing_daemon(instance)
        self._instance, self._webserver, self._defs, self._console = instance, webserver.rstrip("/"), defs, console
        self._client = _graphql_client(webserver)
        self.launch_id = uuid.uuid4().hex[:12]

    def check_partitions(self, local_keys: dict[str, Sequence[str]]) -> None:
        """The webserver's code location must serve the configuration this command reads, or the report would lie."""
        for asset, keys in local_keys.items():
            remote = self._partition_keys(asset)
            if sorted(remote) != sorted(keys):
                raise InvalidInputError(
                    f"the webserver's code location serves other {asset} partitions than this configuration "
                    f"({', '.join(remote)}); give every process the same $RETRIEVAL_EVAL_CONFIG",
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
        from dagster_graphql import DagsterGraphQLClientError

        tags = {TRIGGER_TAG: "launch", LAUNCH_TAG: self.launch_id}
        if partition_key is not None:
            tags.update(self._defs.resolve_job_def(job_name).get_tags_for_partition_key(partition_key, None))
        try:
            return self._client.submit_job_execution(job_name, run_config={}, tags=tags)
        except DagsterGraphQLClientError as error:
            raise InvalidInputError(f"the webserver did not start a run of {job_name}: {error}", source=self._webserver) from None

    def _partition_keys(self, asset: str) -> list[str]:
        import urllib3

        body = {"query": PARTITION_KEYS_QUERY, "variables": {"assetKey": {"path": [asset]}}}
        try:
            answer = urllib3.request("POST", f"{self._webserver}/graphql", json=body, timeout=30, retries=False).json()
        except (urllib3.exceptions.HTTPError, json.JSONDecodeError) as error:
            raise InvalidInputError(
                f"no Dagster webserver answers there ({type(error).__name__}); start `dagster-webserver -w "
                "workspace.yaml` or name it with --webserver",
                source=self._webserver,
            ) from None
        data = answer.get("data") if isinstance(answer, dict) else None
        node = (data or {}).get("assetNodeOrError") or {}
        if "partitionKeys" not in node:
            raise InvalidInputError(
                f"the webserver's code location has no {asset} asset: it does not serve retrieval_pipeline.definitions",
                source=self._webserver,
            )
        return node["partitionKeys"]


def _graphql_client(webserver: str):
    from dagster_graphql import DagsterGraphQLClient

    try:
        address = urlsplit(webserver)
        port = address.port
    except ValueError:
        address, port = None, None
    if address is None or address.scheme not in ("http", "https") or not address.hostname:
        raise InvalidInputError("not a webserver URL; give one such as http://127.0.0.1:3000", source=webserver)
    path = address.path.rstrip("/")
    return DagsterGraphQLClient(address.hostname, port_number=port, use_https=address.scheme == "https", path_prefix=path)


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
