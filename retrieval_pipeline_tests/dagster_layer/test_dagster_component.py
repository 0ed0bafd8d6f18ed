"""A team's own Dagster project (create-dagster) declares the evaluation as a component and drives it with `dg`.

Offline and in the active environment, as after `pip install retrieval-pipeline` there: no uv, no PyPI
version check, no telemetry. PYTHONPATH=src stands in for the editable install of the new project that
`uv sync` would make.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from dagster import AssetCheckKey, AssetKey, DagsterInstance, Definitions
from dagster_test_project import write_project

from retrieval_pipeline.core.services.configuration.lookup import CONFIG_ENV_VAR, STORE_ENV_VAR
from retrieval_pipeline.dagster_layer.definitions import build_definitions

pytestmark = pytest.mark.slow

COMPONENT = "retrieval_pipeline.dagster_layer.component.RetrievalEvaluation"
DEMO_SET = "demo.cranfield"
TIMEOUT_SECONDS = 180
HOST_DEFS = """
import dagster as dg


@dg.asset(group_name="host", automation_condition=dg.AutomationCondition.eager())
def leaderboard() -> None:
    \"\"\"The team's own leaderboard, which the component's must not replace.\"\"\"


@dg.definitions
def defs() -> dg.Definitions:
    return dg.Definitions(
        assets=[leaderboard],
        executor=dg.multiprocess_executor,
        sensors=[dg.AutomationConditionSensorDefinition("host_automation", target=dg.AssetSelection.groups("host"))],
    )
"""


def tool(name: str) -> str:
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"`{name}` is not installed (pip install create-dagster dagster-dg-cli)")
    return found


def run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    """One command in a process group of its own, ended with everything it started, pass or fail."""
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = process.communicate(timeout=TIMEOUT_SECONDS)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == 0, f"{' '.join(command)} exited with {process.returncode}:\n{out}\n{err}"
    return out


@pytest.fixture
def dg_project(tmp_path, monkeypatch):
    """A fresh project `teamproj` with `defs/evals/defs.yaml` scaffolded for the component: (run dg there, that folder)."""
    create_dagster, dg = tool("create-dagster"), tool("dg")
    home = tmp_path / "dagster-home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    root = tmp_path / "teamproj"
    env = {key: value for key, value in os.environ.items() if key not in (CONFIG_ENV_VAR, STORE_ENV_VAR)}
    env.update(DAGSTER_DG_UPDATE_CHECK_ENABLED="0", PYTHONPATH=str(root / "src"))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    run([create_dagster, "project", str(root), "--no-uv-sync"], tmp_path, env)
    run([dg, "scaffold", "defs", COMPONENT, "evals"], root, env)
    evals = root / "src" / "teamproj" / "defs" / "evals"
    assert yaml.safe_load((evals / "defs.yaml").read_text(encoding="utf-8")) == {"type": COMPONENT, "attributes": {}}
    return (lambda *args: run([dg, *args], root, env)), evals


def listed(output: str) -> dict[str, set[str]]:
    found = json.loads(output)
    return {
        "assets": {asset["asset_key"] for asset in found.get("assets", [])},
        "checks": {check["key"] for check in found.get("asset_checks", [])},
        "schedules": {schedule["name"] for schedule in found.get("schedules", [])},
        "sensors": {sensor["name"] for sensor in found.get("sensors", [])},
    }


def served(defs: Definitions) -> dict[str, set[str]]:
    """What `dagster dev` serves from this checkout for the same configuration."""
    repository = defs.get_repository_def()
    return {
        "assets": {key.to_user_string() for key in repository.asset_graph.get_all_asset_keys()},
        "checks": {f"{key.asset_key.to_user_string()}:{key.name}" for key in repository.asset_graph.asset_check_keys},
        "schedules": {schedule.name for schedule in repository.schedule_defs},
        "sensors": {sensor.name for sensor in repository.sensor_defs},
    }


def test_a_dg_project_evaluates_a_partition_of_the_configuration_its_defs_yaml_names(dg_project, tmp_path):
    dg, evals = dg_project
    project = write_project(tmp_path / "evaluation")
    relative = os.path.relpath(project.config, evals)  # read against the defs.yaml's folder, not the working one
    (evals / "defs.yaml").write_text(yaml.safe_dump({"type": COMPONENT, "attributes": {"config": relative}}), encoding="utf-8")

    assert "All definitions loaded successfully." in dg("check", "defs")

    definitions = listed(dg("list", "defs", "--json"))
    assert {"golden_question_set", "retriever_config", "retrieval_evaluation", "leaderboard"} <= definitions["assets"]
    assert "retrieval_evaluation:no_regression" in definitions["checks"]
    assert definitions == served(build_definitions(project.config))

    dg("launch", "--assets", "retrieval_evaluation", "--partition", "good|alpha")  # dimensions by name: retriever|set

    assert list((project.store / "summaries" / "alpha" / "good").rglob("*.parquet"))
    assert not (project.store / "summaries" / "beta.small").exists()
    with DagsterInstance.get() as instance:
        assert instance.get_materialized_partitions(AssetKey("retrieval_evaluation")) == {"good|alpha"}


def test_dg_lists_the_component_and_without_a_configuration_it_evaluates_the_embedded_demo(dg_project):
    dg, evals = dg_project
    components = json.loads(dg("list", "components", "--json"))["items"]
    assert COMPONENT in {component["key"] for component in components}
    # no `config`: the embedded demo; its store (in the home folder) replaced by one beside the defs.yaml
    (evals / "defs.yaml").write_text(yaml.safe_dump({"type": COMPONENT, "attributes": {"store": "results"}}), encoding="utf-8")

    dg("launch", "--assets", "golden_question_set", "--partition", DEMO_SET)

    assert [path.name for path in (evals / "results").rglob("*.parquet")] == [f"{DEMO_SET}.parquet"]


def test_a_team_project_with_its_own_executor_automation_and_leaderboard_runs_two_prefixed_instances_side_by_side(
    dg_project, tmp_path
):
    dg, evals = dg_project
    defs_folder = evals.parent
    (defs_folder / "host.py").write_text(HOST_DEFS, encoding="utf-8")
    demo = {"type": COMPONENT, "attributes": {"prefix": "demo", "store": "results"}}
    (evals / "defs.yaml").write_text(yaml.safe_dump(demo), encoding="utf-8")
    small = write_project(tmp_path / "evaluation")
    (defs_folder / "small").mkdir()
    smaller = {"type": COMPONENT, "attributes": {"prefix": "small", "config": str(small.config)}}
    (defs_folder / "small" / "defs.yaml").write_text(yaml.safe_dump(smaller), encoding="utf-8")

    assert "All definitions loaded successfully." in dg("check", "defs")

    definitions = listed(dg("list", "defs", "--json"))
    assert {"leaderboard", "demo/leaderboard", "small/leaderboard", "small/retrieval_evaluation"} <= definitions["assets"]
    assert {"demo/retrieval_evaluation:no_regression", "small/retrieval_evaluation:no_regression"} <= definitions["checks"]
    assert {"host_automation", "demo_retrieval_automation", "small_retrieval_automation"} <= definitions["sensors"]
    assert {"demo_nightly_retrieval_evaluation", "small_nightly_retrieval_evaluation"} == definitions["schedules"]

    dg("launch", "--assets", "demo/golden_question_set", "--partition", DEMO_SET)
    dg("launch", "--assets", "small/retrieval_evaluation", "--partition", "good|alpha")

    assert [path.name for path in (evals / "results").rglob("*.parquet")] == [f"{DEMO_SET}.parquet"]
    assert list((small.store / "summaries" / "alpha" / "good").rglob("*.parquet"))
    with DagsterInstance.get() as instance:
        assert instance.get_materialized_partitions(AssetKey(["demo", "golden_question_set"])) == {DEMO_SET}
        assert instance.get_materialized_partitions(AssetKey(["small", "retrieval_evaluation"])) == {"good|alpha"}
        for check in (
            AssetCheckKey(AssetKey(["demo", "golden_question_set"]), "labels_exist"),
            AssetCheckKey(AssetKey(["small", "retrieval_evaluation"]), "no_regression"),
        ):
            record = instance.get_latest_asset_check_evaluation_record(check)
            assert record is not None and record.evaluation is not None and record.evaluation.passed, check
