"""The team deployment for the tests marked `team`: started once per module from deploy/team/ (see
services.py), on a small sample project whose schedule ticks every minute and whose sensor polls fast."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dagster_layer"))  # the Dagster tests' sample project
from dagster_test_project import write_project  # noqa: E402
from services import TeamDeployment, require_team, team_environment, team_services  # noqa: E402


def pytest_collection_modifyitems(items):
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.team)
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    require_team()
    root = tmp_path_factory.mktemp("team")
    project = write_project(
        root / "project", dagster={"nightly_cron": "* * * * *", "timezone": "UTC", "sensor_interval_seconds": 5}
    )
    env, ports = team_environment(root, project.config, project.store)
    with team_services(root, env, ports) as services:
        yield TeamDeployment(root, env, project, services, f"http://127.0.0.1:{ports['webserver']}")
