"""The team deployment, started for real on loopback: PostgreSQL, Redis, a code server, the daemon and
one Celery worker, configured from the files under deploy/team/ that docs/production.md shows."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dagster_layer"))  # the Dagster tests' sample project
from dagster_test_project import write_project  # noqa: E402

from services import Service, free_port, missing_services, start, start_postgres, wait_for_port  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TEAM = REPO / "deploy" / "team"
BIN = Path(sys.executable).parent


def pytest_collection_modifyitems(items):
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.team)


@dataclass
class TeamDeployment:
    root: Path
    env: dict[str, str]
    project: object
    services: list[Service] = field(default_factory=list)

    @property
    def workspace(self) -> Path:
        return TEAM / "workspace.yaml"

    def service(self, name: str) -> Service:
        return next(s for s in self.services if s.name == name)

    def command(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
        """A command of this deployment (dagster, retrieval-eval), with every process's environment."""
        return subprocess.run([str(BIN / args[0]), *args[1:]], env=self.env, cwd=self.root, capture_output=True, text=True, timeout=timeout)

    def logs(self) -> str:
        return "\n".join(s.tail() for s in self.services)


def team_environment(root: Path, project, ports: dict[str, int]) -> dict[str, str]:
    """deploy/team/team.env with this test's values: every variable it names, and only those, is set."""
    documented = [line.split("=", 1)[0] for line in (TEAM / "team.env").read_text().splitlines() if line and not line.startswith("#")]
    values = {
        "DAGSTER_HOME": str(root / "dagster_home"),
        "DAGSTER_PG_HOST": "127.0.0.1",
        "DAGSTER_PG_PORT": str(ports["postgres"]),
        "DAGSTER_PG_DB": "dagster",
        "DAGSTER_PG_USERNAME": "dagster",
        "DAGSTER_PG_PASSWORD": "unused-with-trust-auth",
        "DAGSTER_CELERY_BROKER_URL": f"redis://127.0.0.1:{ports['redis']}/0",
        "DAGSTER_CELERY_BACKEND_URL": f"redis://127.0.0.1:{ports['redis']}/1",
        "DAGSTER_GRPC_HOST": "127.0.0.1",
        "DAGSTER_GRPC_PORT": str(ports["code"]),
        "RETRIEVAL_EVAL_CONFIG": str(project.config),
        "RETRIEVAL_EVAL_STORE": str(project.store),
        "RETRIEVAL_EVAL_CACHE": str(root / "cache"),
        "RETRIEVAL_EVAL_EXECUTOR": "in_process",
    }
    assert sorted(values) == sorted(documented), "team.env and this test must name the same variables"
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER_", "RETRIEVAL_EVAL_"))}
    return {**inherited, **values, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    missing = missing_services()
    if missing:
        pytest.skip(f"the team deployment test needs {', '.join(missing)} (.ci/run installs postgresql and redis-server)")
    pytest.importorskip("dagster_celery", reason="the team deployment needs the [team] extra")
    pytest.importorskip("dagster_postgres", reason="the team deployment needs the [team] extra")
    root = tmp_path_factory.mktemp("team")
    logs = root / "logs"
    logs.mkdir()
    project = write_project(
        root / "project", dagster={"nightly_cron": "* * * * *", "timezone": "UTC", "sensor_interval_seconds": 5}
    )
    ports = {name: free_port() for name in ("postgres", "redis", "code")}
    env = team_environment(root, project, ports)
    home = Path(env["DAGSTER_HOME"])
    home.mkdir()
    shutil.copy(TEAM / "dagster.yaml", home / "dagster.yaml")
    deployment = TeamDeployment(root, env, project)
    data_dir = None
    try:
        postgres, data_dir = start_postgres(logs, ports["postgres"], env["DAGSTER_PG_USERNAME"])
        deployment.services.append(postgres)
        wait_for_port(ports["postgres"], postgres.process, "PostgreSQL")
        subprocess.run(["createdb", "-h", "127.0.0.1", "-p", str(ports["postgres"]), "-U", "dagster", "dagster"], check=True, capture_output=True)
        redis = start("redis", ["redis-server", "--port", str(ports["redis"]), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], logs)
        deployment.services.append(redis)
        wait_for_port(ports["redis"], redis.process, "Redis")
        code = start("code-server", [str(BIN / "dagster"), "api", "grpc", "-m", "retrieval_pipeline.definitions"], logs, env, root)
        deployment.services.append(code)
        wait_for_port(ports["code"], code.process, "the code server", timeout=90)
        deployment.services.append(start("daemon", [str(BIN / "dagster-daemon"), "run", "-w", str(deployment.workspace)], logs, env, root))
        worker = [str(BIN / "dagster-celery"), "worker", "start", "-A", "dagster_celery.app", "-y", str(TEAM / "celery-worker.yaml"),
                  "-n", "team-test-1", "-l", "WARNING", "--", "--concurrency=2"]
        deployment.services.append(start("celery-worker", worker, logs, env, root, stop_signal=signal.SIGTERM))
        yield deployment
    finally:
        for service in reversed(deployment.services):
            service.stop()
        if data_dir is not None:
            shutil.rmtree(data_dir, ignore_errors=True)
