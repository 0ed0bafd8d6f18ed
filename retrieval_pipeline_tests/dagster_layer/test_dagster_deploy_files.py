"""docs/production.md shows only files the tests use: each configuration block is a file under deploy/,
the team and Kubernetes instances agree with each other and with team.env, and both load as instances."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from dagster._core.instance.config import dagster_instance_config

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
DOC = REPO / "docs" / "production.md"
CONFIGURATION_BLOCK = re.compile(r"```(yaml|ini)\n(.*?)```", re.S)


def _environment_names(path: Path) -> list[str]:
    return [line.split("=", 1)[0] for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]


def test_every_configuration_block_in_the_production_doc_is_a_file_under_deploy():
    files = {path.read_text(encoding="utf-8").strip(): path for path in DEPLOY.rglob("*") if path.is_file()}
    blocks = [body.strip() for _, body in CONFIGURATION_BLOCK.findall(DOC.read_text(encoding="utf-8"))]
    assert len(blocks) >= 6
    assert [files.get(block) is not None for block in blocks] == [True] * len(blocks)
    assert {files[block].relative_to(DEPLOY).as_posix() for block in blocks} == {
        path.relative_to(DEPLOY).as_posix() for path in DEPLOY.rglob("*") if path.is_file()
    }


@pytest.mark.parametrize("variant", ["team", "k8s"])
def test_each_instance_file_is_a_valid_instance_configuration(variant, tmp_path):
    (tmp_path / "dagster.yaml").write_text((DEPLOY / variant / "dagster.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    config, _ = dagster_instance_config(str(tmp_path))
    assert config["storage"]["postgres"]["postgres_db"]["scheme"] == "postgresql+psycopg2"
    assert config["run_coordinator"]["config"]["dequeue_interval_seconds"] == 1


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
