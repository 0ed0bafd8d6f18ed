"""`retrieval-eval nightly` as a Dagster user meets its runs: launched against the code location the
printed command opens, so the UI re-executes them; Ctrl-C ends the run in progress; the order is the
asset graph's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from dagster import AssetKey, DagsterInstance, DagsterRunStatus, Definitions, asset, define_asset_job
from dagster_test_project import RETRIEVERS, SETS
from webserver_helpers import printed_hint

from retrieval_pipeline.cli.nightly import nightly
from retrieval_pipeline.dagster_layer.definitions import (
    EVALUATION_JOB,
    LEADERBOARD_JOB,
    RETRIEVERS_JOB,
    SETS_JOB,
    build_definitions,
)
from retrieval_pipeline.dagster_layer.launched_runs import LOCATION, UI_COMMAND, LaunchedRuns
from retrieval_pipeline.dagster_layer.nightly import graph_levels

RUNS = len(SETS) + len(RETRIEVERS) + len(SETS) * len(RETRIEVERS) + 1 + 2 * len(SETS)
ENDED = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}
REEXECUTE = """mutation Reexecute($parent: String!) {
  launchPipelineReexecution(reexecutionParams: {parentRunId: $parent, strategy: ALL_STEPS}) {
    __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message }
  }
}"""
ORIGINS = """query Origins($job: String!) {
  runsOrError(filter: {pipelineName: $job}) { ... on Runs { results { runId repositoryOrigin { repositoryLocationName } } } }
}"""


@pytest.mark.slow
def test_nightly_runs_have_the_origin_the_ui_re_executes_from_the_command_it_prints(project, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)

    result = CliRunner().invoke(nightly, ["--config", str(project.config)])

    assert result.exit_code == 0, result.output
    with DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        runs = [record.dagster_run for record in instance.get_run_records()]
        assert len(runs) == RUNS and {run.status for run in runs} == {DagsterRunStatus.SUCCESS}
        assert {run.remote_job_origin.location_name for run in runs} == {LOCATION}
        assert {run.remote_job_origin.job_name for run in runs} >= {SETS_JOB, RETRIEVERS_JOB, EVALUATION_JOB, LEADERBOARD_JOB}
        evaluation = next(run for run in runs if run.job_name == EVALUATION_JOB)
    environment, command = printed_hint(result.output)
    assert command == list(UI_COMMAND) and environment["RETRIEVAL_EVAL_CONFIG"] == str(project.config)

    elsewhere = tmp_path / "elsewhere"  # "from any folder": the hinted command opens this project, not the demo
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with LaunchedRuns(environment) as ui:
        origins = ui.query(ORIGINS, {"job": EVALUATION_JOB})["runsOrError"]["results"]
        launched = ui.query(REEXECUTE, {"parent": evaluation.run_id})["launchPipelineReexecution"]
        assert launched["__typename"] == "LaunchRunSuccess", launched
        child = launched["run"]["runId"]
        deadline = time.monotonic() + 300
        while ui.statuses({child}).get(child) not in {"SUCCESS", "FAILURE", "CANCELED"} and time.monotonic() < deadline:
            time.sleep(0.5)
    assert len(origins) == len(SETS) * len(RETRIEVERS)
    assert {run["repositoryOrigin"]["repositoryLocationName"] for run in origins} == {LOCATION}
    with DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        rerun = instance.get_run_by_id(child)
        assert rerun.status == DagsterRunStatus.SUCCESS
        assert (
            rerun.parent_run_id == evaluation.run_id and rerun.tags["dagster/partition"] == evaluation.tags["dagster/partition"]
        )


def start_nightly(arguments: list[str], cwd: Path) -> subprocess.Popen:
    """The command in a session of its own, as a shell starts a foreground job: Ctrl-C reaches its group."""
    env = {**os.environ, "DAGSTER_HOME": str(cwd / "home")}
    env.pop("RETRIEVAL_EVAL_CONFIG", None)
    command = [sys.executable, "-c", "from retrieval_pipeline.cli import main; main()", "nightly", *arguments]
    return subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def runs_of(home: Path) -> list:
    with DagsterInstance.from_config(str(home)) as instance:
        return [record.dagster_run for record in instance.get_run_records()]


@pytest.mark.slow
@pytest.mark.parametrize("way", [[], ["--in-process"]], ids=["launched", "in-process"])
def test_ctrl_c_ends_the_run_in_progress_and_prints_one_line(project, tmp_path, way):
    (tmp_path / "home").mkdir()
    DagsterInstance.from_config(str(tmp_path / "home")).dispose()  # its databases made before this test reads them
    process = start_nightly(["--config", str(project.config), *way], tmp_path)
    deadline = time.monotonic() + 300
    while not any(run.status == DagsterRunStatus.STARTED for run in runs_of(tmp_path / "home")):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.05)

    os.killpg(process.pid, signal.SIGINT)  # what the terminal does: the whole foreground group
    _, stderr = process.communicate(timeout=300)

    assert process.returncode == 130, stderr
    assert len(stderr.splitlines()) == 1, stderr
    [line] = stderr.splitlines()
    assert line.startswith("error: interrupted (Ctrl-C): ")
    statuses = [run.status for run in runs_of(tmp_path / "home")]
    assert set(statuses) <= ENDED, statuses
    assert {DagsterRunStatus.CANCELED, DagsterRunStatus.FAILURE} & set(statuses)


def test_nightly_takes_its_order_from_the_asset_graph(project):
    @asset(deps=[AssetKey("leaderboard")])
    def team_digest() -> None:
        """A team's own asset downstream of the leaderboard, with a job of its own."""

    defs = Definitions.merge(
        build_definitions(project.config), Definitions(assets=[team_digest], jobs=[define_asset_job("digest_job", [team_digest])])
    )
    levels = [[request.job for _, request in level] for level in graph_levels(defs)]

    position = {job: number for number, level in enumerate(levels) for job in level}
    assert position[SETS_JOB] == position[RETRIEVERS_JOB] < position[EVALUATION_JOB] < position[LEADERBOARD_JOB]
    assert position["digest_job"] == len(levels) - 1 and levels[-1] == ["digest_job"]
    assert levels[position[EVALUATION_JOB]].count(EVALUATION_JOB) == len(SETS) * len(RETRIEVERS)
