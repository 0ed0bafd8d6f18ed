"""`retrieval-eval nightly --launch`: the same runs submitted through a real `dagster-webserver` to the
instance's coordinator and launcher (here Dagster's default launcher, a subprocess per run from the
workspace's code server), the same report and exit codes; and a clear refusal when the runs could not be
served."""

from __future__ import annotations

import io
import os
import re
from contextlib import contextmanager
from pathlib import Path

import pytest
from dagster import DagsterInstance, RunsFilter
from dagster._core.instance.ref import InstanceRef
from dagster_test_project import RETRIEVERS, SETS, degraded
from rich.console import Console
from webserver_helpers import free_port, running_webserver

from retrieval_pipeline.cli.nightly import run_nightly
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.dagster_layer.launch import LAUNCH_TAG
from retrieval_pipeline.dagster_layer.schedules import TRIGGER_TAG

pytestmark = pytest.mark.slow

DIRECT_INSTANCE = (
    "run_coordinator:\n  module: dagster.core.run_coordinator\n  class: DefaultRunCoordinator\ntelemetry:\n  enabled: false\n"
)
QUEUED_INSTANCE = "telemetry:\n  enabled: false\n"  # Dagster 1.13's default coordinator queues runs for the daemon
WORKSPACE = (
    "load_from:\n  - python_module:\n      module_name: retrieval_pipeline.definitions\n      location_name: retrieval_pipeline\n"
)


@pytest.fixture
def launch_setup(project, tmp_path, monkeypatch):
    """An instance on disk (launched runs are other processes), and a webserver on it serving the
    workspace every process shares."""
    monkeypatch.setenv("RETRIEVAL_EVAL_CONFIG", str(project.config))
    monkeypatch.setenv("RETRIEVAL_EVAL_STORE", str(project.store))
    workspace = tmp_path / "workspace.yaml"
    workspace.write_text(WORKSPACE, encoding="utf-8")
    home = tmp_path / "home"

    @contextmanager
    def team_with(settings: str):
        home.mkdir(exist_ok=True)
        (home / "dagster.yaml").write_text(settings, encoding="utf-8")
        target = ["-w", str(workspace)]
        with running_webserver(home, Path(os.environ["RETRIEVAL_EVAL_CONFIG"]), tmp_path / "webserver.log", target) as url:
            with DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
                yield instance, url

    return team_with


def nightly(project, instance, webserver=None):
    output = io.StringIO()
    console = Console(file=output, width=200)
    report = run_nightly(project.config, str(project.store), instance=instance, console=console, launch=webserver)
    return report, output.getvalue()


def test_launched_runs_report_a_regression_and_exit_like_in_process_runs(project, launch_setup):
    with launch_setup(DIRECT_INSTANCE) as (instance, webserver):
        assert nightly(project, instance)[0].exit_code == 0  # the baseline, in-process
        project.write_run("good", degraded("a1", "a2"))
        report, output = nightly(project, instance, webserver)
        assert report.exit_code == 1, output
        assert [(o.set_identifier, o.retriever_identifier) for o in report.evaluations if not o.check_passed] == [
            ("alpha", "good")
        ]
        assert "FAILED (ERROR)" in output and "Regression: top-1 hit rate dropped 33.3 pp" in output
        assert "Leaderboard: alpha" in output and output.count("PASSED") == 3
        launched = instance.get_runs(filters=RunsFilter(tags={TRIGGER_TAG: "launch"}))
        assert len(launched) == len(SETS) + len(RETRIEVERS) + len(SETS) * len(RETRIEVERS) + 1
        assert len({run.tags[LAUNCH_TAG] for run in launched}) == 1
        assert {run.tags["dagster/partition"] for run in launched if "|" in run.tags.get("dagster/partition", "")} == {
            f"{r}|{s}" for s in SETS for r in RETRIEVERS
        }


def test_a_queueing_instance_without_a_daemon_is_refused_before_anything_is_submitted(project, launch_setup):
    with launch_setup(QUEUED_INSTANCE) as (instance, webserver):
        with pytest.raises(InvalidInputError, match="dagster.yaml: the instance queues runs but no dagster-daemon"):
            nightly(project, instance, webserver)
        assert instance.get_runs() == []


@pytest.mark.parametrize(
    ("webserver", "refusal"),
    [
        (f"http://127.0.0.1:{free_port()}", "no Dagster webserver answers there"),
        ("127.0.0.1:3000", "not a webserver URL"),
        ("http://127.0.0.1:port", "not a webserver URL"),
    ],
)
def test_a_webserver_that_does_not_answer_or_a_bad_url_is_named(project, tmp_path, webserver, refusal):
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text(DIRECT_INSTANCE, encoding="utf-8")
    with DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        with pytest.raises(InvalidInputError, match=f"{re.escape(webserver)}: {refusal}"):
            nightly(project, instance, webserver)
        assert instance.get_runs() == []


def test_a_code_location_serving_another_configuration_is_refused(project, launch_setup, tmp_path, monkeypatch):
    other = project.root / "other.yaml"
    other.write_text(
        project.config.read_text(encoding="utf-8").replace("other:", "third:").replace("runs/other", "runs/good"),
        encoding="utf-8",
    )
    monkeypatch.setenv("RETRIEVAL_EVAL_CONFIG", str(other))
    with launch_setup(DIRECT_INSTANCE) as (instance, webserver):
        with pytest.raises(InvalidInputError, match="serves other retriever_config partitions than this configuration"):
            nightly(project, instance, webserver)
        assert instance.get_runs() == []
