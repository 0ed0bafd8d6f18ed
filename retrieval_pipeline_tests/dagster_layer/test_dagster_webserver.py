"""Smoke test of what a newcomer sees: runs recorded in a local instance, then the Dagster UI on it.

The webserver runs as a subprocess on a free loopback port, loads `workspace.yaml` from the project
root, and is asked through its GraphQL API (what the UI itself uses) for the assets, the check, and the
check's per-partition results. It is always terminated, and every wait is bounded.
"""

from __future__ import annotations

import pytest
from dagster import DagsterInstance
from dagster_runs import evaluate
from dagster_test_project import RETRIEVERS, SETS, degraded
from webserver_helpers import REPO_ROOT, fresh_dagster_home, graphql, running_webserver

from retrieval_pipeline.dagster_layer.definitions import build_definitions

ASSETS_QUERY = """
{
  workspaceOrError { ... on Workspace { locationEntries { name locationOrLoadError {
      __typename ... on PythonError { message } } } } }
  assetNodes {
    assetKey { path }
    partitionStats { numMaterialized numPartitions numFailed }
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


@pytest.mark.slow
def test_the_ui_shows_the_assets_the_check_and_its_partition_results(project, tmp_path):
    home = fresh_dagster_home(tmp_path / "dagster_home")
    defs = build_definitions(project.config)
    with DagsterInstance.from_config(str(home)) as instance:  # what `dagster dev` will read
        for retriever in RETRIEVERS:
            for set_identifier in SETS:
                evaluate(defs, instance, set_identifier, retriever)
        project.write_run("good", degraded("a1", "a2"))
        evaluate(defs, instance, "alpha", "good", raise_on_error=False)  # fails its check, its run and its partition

    target = ["-w", str(REPO_ROOT / "workspace.yaml")]
    with running_webserver(home, project.config, tmp_path / "webserver.log", target) as url:
        data = graphql(url, ASSETS_QUERY)

    (location,) = data["workspaceOrError"]["locationEntries"]
    assert location["name"] == "retrieval_pipeline"
    assert location["locationOrLoadError"]["__typename"] == "RepositoryLocation", location
    nodes = {"/".join(node["assetKey"]["path"]): node for node in data["assetNodes"]}
    assert set(nodes) == {
        "golden_question_set",
        "retriever_config",
        "retrieval_evaluation",
        "leaderboard",
        "label_audit",
        "generated_set_agreement",
        "machine_judgements",
        "generated_questions",
    }
    assert nodes["retrieval_evaluation"]["partitionStats"] == {"numMaterialized": 3, "numPartitions": 4, "numFailed": 1}

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
