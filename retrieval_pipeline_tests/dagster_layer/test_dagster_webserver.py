"""Smoke test of what a newcomer sees: runs recorded in a local instance, then the Dagster UI on it.

The webserver runs as a subprocess on a free loopback port, loads `workspace.yaml` from the project
root, and is asked through its GraphQL API (what the UI itself uses) for the assets, the check, and the
check's per-partition results. It is always terminated, and every wait is bounded.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from dagster import DagsterInstance
from dagster._core.instance.ref import InstanceRef
from dagster_runs import evaluate
from dagster_test_project import RETRIEVERS, SETS, degraded

from retrieval_pipeline.dagster_layer.definitions import build_definitions

REPO_ROOT = Path(__file__).resolve().parents[2]
WEBSERVER = Path(sys.executable).with_name("dagster-webserver")
START_TIMEOUT_SECONDS = 60

LOCATION_QUERY = "{ locationStatusesOrError { ... on WorkspaceLocationStatusEntries { entries { name loadStatus } } } }"
ASSETS_QUERY = """
{
  workspaceOrError { ... on Workspace { locationEntries { name locationOrLoadError {
      __typename ... on PythonError { message } } } } }
  assetNodes {
    assetKey { path }
    partitionStats { numMaterialized numPartitions }
    assetChecksOrError {
      __typename
      ... on AssetChecks {
        checks {
          name
          partitionDefinition { type }
          partitionStatuses {
            __typename
            ... on AssetCheckMultiPartitionStatuses {
              primaryDimensionName
              ranges {
                primaryDimStartKey
                primaryDimEndKey
                secondaryDim {
                  __typename
                  ... on AssetCheckDefaultPartitionStatuses { succeededPartitions failedPartitions }
                }
              }
            }
          }
        }
      }
    }
  }
}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def graphql(url: str, query: str) -> dict:
    response = requests.post(f"{url}/graphql", json={"query": query}, timeout=20)
    response.raise_for_status()
    body = response.json()
    assert "errors" not in body, body["errors"]
    return body["data"]


def wait_until_loaded(url: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"dagster-webserver exited with {server.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            entries = graphql(url, LOCATION_QUERY)["locationStatusesOrError"]["entries"]
            if entries and all(entry["loadStatus"] == "LOADED" for entry in entries):
                return
        except (requests.RequestException, KeyError, TypeError):
            pass
        time.sleep(0.5)
    pytest.fail(f"dagster-webserver not ready in {START_TIMEOUT_SECONDS}s:\n{log.read_text(errors='replace')[-3000:]}")


@pytest.mark.skipif(not WEBSERVER.exists(), reason=f"dagster-webserver not found beside {sys.executable}")
def test_the_ui_shows_the_assets_the_check_and_its_partition_results(project, tmp_path):
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text((REPO_ROOT / "dagster.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    defs = build_definitions(project.config)
    with DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:  # what `dagster dev` will read
        for retriever in RETRIEVERS:
            for set_identifier in SETS:
                evaluate(defs, instance, set_identifier, retriever)
        project.write_run("good", degraded("a1", "a2"))
        evaluate(defs, instance, "alpha", "good")  # fails its check

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "webserver.log"
    env = {**os.environ, "DAGSTER_HOME": str(home), "RETRIEVAL_EVAL_CONFIG": str(project.config)}
    with log.open("wb") as output:
        server = subprocess.Popen(
            [str(WEBSERVER), "-h", "127.0.0.1", "-p", str(port), "-w", str(REPO_ROOT / "workspace.yaml")],
            cwd=REPO_ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_until_loaded(url, server, log)
            data = graphql(url, ASSETS_QUERY)
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=5)

    (location,) = data["workspaceOrError"]["locationEntries"]
    assert location["name"] == "retrieval_pipeline"
    assert location["locationOrLoadError"]["__typename"] == "RepositoryLocation", location
    nodes = {"/".join(node["assetKey"]["path"]): node for node in data["assetNodes"]}
    assert set(nodes) == {"golden_question_set", "retriever_config", "retrieval_evaluation", "leaderboard", "label_audit"}
    assert nodes["retrieval_evaluation"]["partitionStats"] == {"numMaterialized": 4, "numPartitions": 4}

    (check,) = nodes["retrieval_evaluation"]["assetChecksOrError"]["checks"]
    assert check["name"] == "no_regression"
    assert check["partitionDefinition"]["type"] == "MULTIPARTITIONED"
    statuses = check["partitionStatuses"]
    assert statuses["__typename"] == "AssetCheckMultiPartitionStatuses"
    outcomes = {}
    for row in statuses["ranges"]:  # run-length encoded along the primary dimension
        first, last = RETRIEVERS.index(row["primaryDimStartKey"]), RETRIEVERS.index(row["primaryDimEndKey"])
        for retriever in RETRIEVERS[first : last + 1]:
            for status in ("succeeded", "failed"):
                for set_identifier in row["secondaryDim"][f"{status}Partitions"]:
                    outcomes[(statuses["primaryDimensionName"], retriever, set_identifier)] = status
    assert outcomes == {
        ("retriever", "good", "alpha"): "failed",
        ("retriever", "good", "beta.small"): "succeeded",
        ("retriever", "other", "alpha"): "succeeded",
        ("retriever", "other", "beta.small"): "succeeded",
    }
