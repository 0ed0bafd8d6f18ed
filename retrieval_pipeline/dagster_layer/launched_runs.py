"""Runs launched through the instance against the code location, as the UI, a schedule or a backfill
launch them, so that each run has the code-location origin the UI re-executes, and shows in the Timeline
and its job's Runs.

`nightly` starts the command it prints for the UI (`dagster dev -m retrieval_pipeline.definitions`, the
project's configuration and store in its environment) on a free 127.0.0.1 port, in a session of its own
so that Ctrl-C reaches only `nightly`, with its output in a log file under DAGSTER_HOME. Each run is
submitted through Dagster's GraphQL client; the instance's queue launches it (at most its
`max_concurrent_runs` at once), each in a process of its own. Ctrl-C terminates the runs not yet ended,
which end CANCELED. Only public interfaces: the `dagster dev` command, `DagsterGraphQLClient` and the
GraphQL schema the UI reads.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from retrieval_pipeline.core.base.errors import ServiceFailedError
from retrieval_pipeline.core.services.configuration.lookup import CONFIG_ENV_VAR, STORE_ENV_VAR
from retrieval_pipeline.dagster_layer.definitions import NIGHTLY_SERVER_ENV_VAR
from retrieval_pipeline.dagster_layer.nightly import PartitionOutcome, PartitionRun
from retrieval_pipeline.dagster_layer.resources import RetrievalProject

MODULE = LOCATION = "retrieval_pipeline.definitions"
"""The code location, and the location name `dagster dev -m retrieval_pipeline.definitions` gives it."""
UI_COMMAND = ("dagster", "dev", "-m", MODULE)
LOG_NAME = "nightly-dagster-dev.log"
ENDED = {"SUCCESS", "FAILURE", "CANCELED"}
STARTUP_SECONDS, CANCEL_SECONDS, STOP_SECONDS, POLL_SECONDS = 180.0, 60.0, 30.0, 0.1

STATUS_QUERY = """query Statuses($ids: [String!]) {
  runsOrError(filter: {runIds: $ids}) { ... on Runs { results { runId status } } }
}"""
FAILURE_QUERY = """query Failure($id: ID!) {
  runOrError(runId: $id) { ... on Run { eventConnection { events { __typename
    ... on ExecutionStepFailureEvent { error { message className causes { message className } } }
    ... on RunFailureEvent { message error { message className causes { message className } } }
  } } } }
}"""
RECORDED_QUERY = """query Recorded($id: ID!) {
  runOrError(runId: $id) { ... on Run { eventConnection { events { __typename } } } }
}"""
RECORDING_EVENTS = {"MaterializationEvent", "AssetCheckEvaluationEvent"}
LOCATION_QUERY = "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }"


def ui_environment(home: Path, project: RetrievalProject) -> dict[str, str]:
    """What the UI needs to open the project that ran: its instance, its configuration and (when it
    replaced the configuration's) its store."""
    store = {STORE_ENV_VAR: project.resolved_store_uri} if project.store_uri else {}
    return {"DAGSTER_HOME": str(home), CONFIG_ENV_VAR: str(project.resolved_config_path), **store}


def ui_command_line(environment: Mapping[str, str]) -> str:
    """The one line that opens the same project from any folder."""
    return " ".join([*(f"{name}={shlex.quote(value)}" for name, value in environment.items()), *UI_COMMAND])


class LaunchedRuns:
    """A context: the code location served for this night's runs, then stopped."""

    def __init__(self, environment: Mapping[str, str], run_config: Mapping | None = None, module: str = MODULE):
        """`module`: the code location served, this project's unless another is named (a benchmark's floor)."""
        self.environment, self.run_config, self.module = dict(environment), dict(run_config or {}), module
        self.log_path = Path(environment["DAGSTER_HOME"]) / LOG_NAME
        self.pending: set[str] = set()
        self.submitted: dict[str, PartitionRun] = {}
        self.ended: dict[str, str] = {}

    def __enter__(self) -> LaunchedRuns:
        from dagster_graphql import DagsterGraphQLClient

        self.port = _free_port()
        with self.log_path.open("w", encoding="utf-8") as log:
            self.server = subprocess.Popen(
                [sys.executable, "-m", *UI_COMMAND[:-1], self.module, "-h", "127.0.0.1", "-p", str(self.port)],
                env={**os.environ, **self.environment, NIGHTLY_SERVER_ENV_VAR: "1"},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            self._wait_loaded()
        except BaseException:
            self._stop()
            raise
        self.client = DagsterGraphQLClient("127.0.0.1", port_number=self.port)
        return self

    def __exit__(self, *exc_info) -> None:
        try:
            if self.pending:
                self._cancel()
        finally:
            self._stop()

    def run(self, requests: Sequence[PartitionRun]) -> Iterator[PartitionOutcome]:
        submitted = self.submitted
        for request in requests:
            run_id = self.client.submit_job_execution(
                request.job,
                repository_location_name=self.module,  # the location name `dagster dev -m MODULE` gives
                run_config=self.run_config,
                tags=_partition_tags(request),
            )
            submitted[run_id] = request
            self.pending.add(run_id)
        while self.pending:
            for run_id, status in self.statuses(self.pending).items():
                if status in ENDED:
                    self.pending.discard(run_id)
                    yield self._outcome(submitted[run_id], run_id, status)
            time.sleep(POLL_SECONDS)

    def _outcome(self, request: PartitionRun, run_id: str, status: str) -> PartitionOutcome:
        if status == "SUCCESS":
            return PartitionOutcome(request)
        if status == "CANCELED":
            return PartitionOutcome.failed(request, KeyboardInterrupt, f"run {run_id} was canceled")
        run = self.query(FAILURE_QUERY, {"id": run_id})["runOrError"]
        events = [e for e in run.get("eventConnection", {}).get("events", []) if e.get("error")]
        if not events:
            return PartitionOutcome.failed(request, RuntimeError, f"run {run_id} failed; see its page in the Dagster UI")
        return PartitionOutcome.failed(request, *_raised(events[0]["error"]))

    def statuses(self, run_ids: set[str]) -> dict[str, str]:
        """Each run's status, as the UI reads it."""
        results = self.query(STATUS_QUERY, {"ids": sorted(run_ids)})["runsOrError"].get("results", [])
        return {run["runId"]: run["status"] for run in results}

    def query(self, query: str, variables: Mapping | None = None) -> dict:
        """A GraphQL query of the served location, as the UI asks it."""
        import requests

        response = requests.post(
            f"http://127.0.0.1:{self.port}/graphql", json={"query": query, "variables": variables or {}}, timeout=60
        )
        response.raise_for_status()
        return response.json()["data"]

    def _wait_loaded(self) -> None:
        import requests

        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                break
            try:
                entries = self.query(LOCATION_QUERY)["workspaceOrError"]["locationEntries"]
            except (requests.RequestException, KeyError, TypeError, ValueError):
                entries = []
            if entries and all(entry["loadStatus"] == "LOADED" for entry in entries):
                return
            time.sleep(POLL_SECONDS)
        raise ServiceFailedError(f"`dagster dev` did not serve the code location; see {self.log_path}")

    def stop(self) -> Iterator[PartitionOutcome]:
        """Ctrl-C: the runs not ended are terminated, and those that ended meanwhile are reported, so the
        night's summary names every evaluation Dagster recorded: one that succeeded or failed its check
        before it could be terminated, and one canceled after its materialization was recorded."""
        self._cancel()
        for run_id, status in self.ended.items():
            if status == "CANCELED" and self._recorded(run_id):
                status = "SUCCESS"
            yield self._outcome(self.submitted[run_id], run_id, status)

    def _recorded(self, run_id: str) -> bool:
        """Whether the run recorded its asset (a materialization or a check's evaluation) before it ended."""
        run = self.query(RECORDED_QUERY, {"id": run_id})["runOrError"]
        return any(event["__typename"] in RECORDING_EVENTS for event in run.get("eventConnection", {}).get("events", []))

    def _cancel(self) -> None:
        """Terminate what is queued or running (each ends CANCELED), and wait for them to end. A run still
        STARTING cannot be terminated until its process has started: it is asked again until it can be."""
        from dagster_graphql import DagsterGraphQLClientError

        asked: set[str] = set()
        deadline = time.monotonic() + CANCEL_SECONDS
        while self.pending and time.monotonic() < deadline:
            statuses = self.statuses(self.pending)
            self.ended.update({run_id: status for run_id, status in statuses.items() if status in ENDED})
            self.pending = {run_id for run_id in self.pending if statuses.get(run_id) not in ENDED}
            for run_id in sorted(self.pending - asked):
                try:
                    self.client.terminate_run(run_id)
                    asked.add(run_id)
                except DagsterGraphQLClientError:
                    pass
            time.sleep(POLL_SECONDS)
        self.pending.clear()

    def _stop(self) -> None:
        if self.server.poll() is None:
            self.server.terminate()  # `dagster dev` alone: it stops its webserver, daemon and code server
            try:
                self.server.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(self.server.pid, signal.SIGKILL)
                self.server.wait()


def _partition_tags(request: PartitionRun) -> dict[str, str]:
    """The tags a partition's run carries when the UI launches it: its key and, for a key with several
    dimensions, each dimension's."""
    if request.key is None:
        return {}
    dimensions = {f"dagster/partition/{name}": key for name, key in request.dimensions().items() if name is not None}
    return {"dagster/partition": request.partition, **dimensions}


def _raised(error: Mapping) -> tuple[type[BaseException], str]:
    """The exception the asset raised (Dagster wraps it in its own step error), by its class when it is
    one of this package's, and its message."""
    for raised in [error, *error.get("causes", [])]:
        qualified, _, message = raised["message"].partition(": ")
        if not qualified.startswith("dagster."):
            return _error_class(qualified), message.strip()
    return RuntimeError, error["message"].strip()


def _error_class(qualified: str) -> type[BaseException]:
    import importlib

    module, _, name = qualified.rpartition(".")
    if module.split(".")[0] == "retrieval_pipeline":
        found = getattr(importlib.import_module(module), name, None)
        if isinstance(found, type) and issubclass(found, BaseException):
            return found
    return RuntimeError


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
