"""Runs started without run configuration (schedule ticks, sensor requests, backfills, nightly --launch)
get the executor's settings from $RETRIEVAL_EVAL_EXECUTOR_CONFIG, or the code location refuses to load."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import validate_run_config

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, build_definitions
from retrieval_pipeline.dagster_layer.executors import EXECUTOR_CONFIG_ENV_VAR, EXECUTOR_ENV_VAR

CELERY_SETTINGS = Path(__file__).resolve().parents[2] / "deploy" / "executors" / "celery.yaml"


def _settings_without_run_config(defs) -> dict:
    return validate_run_config(defs.resolve_job_def(EVALUATION_JOB), {})["execution"]


def test_the_celery_executor_takes_the_redis_broker_from_its_settings_file_without_run_config(monkeypatch, project):
    pytest.importorskip("dagster_celery", reason="the Celery executor needs the [team] extra")
    monkeypatch.setenv(EXECUTOR_ENV_VAR, "celery")
    monkeypatch.setenv(EXECUTOR_CONFIG_ENV_VAR, str(CELERY_SETTINGS))
    monkeypatch.setenv("DAGSTER_CELERY_BROKER_URL", "redis://127.0.0.1:6390/0")
    monkeypatch.setenv("DAGSTER_CELERY_BACKEND_URL", "redis://127.0.0.1:6390/1")
    execution = _settings_without_run_config(build_definitions(project.config))
    assert execution["celery"]["broker"] == "redis://127.0.0.1:6390/0"
    assert execution["celery"]["backend"] == "redis://127.0.0.1:6390/1"


@pytest.mark.parametrize("executor", ["celery", "dask", "k8s", "docker"])
def test_an_integration_executor_without_settings_is_refused_at_load(monkeypatch, project, executor):
    monkeypatch.setenv(EXECUTOR_ENV_VAR, executor)
    monkeypatch.delenv(EXECUTOR_CONFIG_ENV_VAR, raising=False)
    with pytest.raises(InvalidInputError, match=rf"the {executor} executor needs its settings .*\${EXECUTOR_CONFIG_ENV_VAR}"):
        build_definitions(project.config)


def test_settings_the_executor_rejects_fail_the_load_naming_the_file_and_field(monkeypatch, project, tmp_path):
    bad = tmp_path / "in_process.yaml"
    bad.write_text("retries:\n  sometimes: {}\n", encoding="utf-8")
    monkeypatch.setenv(EXECUTOR_ENV_VAR, "in_process")
    monkeypatch.setenv(EXECUTOR_CONFIG_ENV_VAR, str(bad))
    with pytest.raises(InvalidInputError, match=rf"{bad}: executor settings rejected: .*sometimes"):
        build_definitions(project.config)


def test_a_settings_variable_naming_no_file_fails_the_load_naming_it(monkeypatch, project, tmp_path):
    monkeypatch.setenv(EXECUTOR_ENV_VAR, "in_process")
    monkeypatch.setenv(EXECUTOR_CONFIG_ENV_VAR, str(tmp_path / "missing.yaml"))
    with pytest.raises(InvalidInputError, match="missing.yaml: cannot read the executor settings"):
        build_definitions(project.config)


def test_dagster_own_executors_work_unconfigured(monkeypatch, project):
    monkeypatch.setenv(EXECUTOR_ENV_VAR, "multiprocess")
    monkeypatch.delenv(EXECUTOR_CONFIG_ENV_VAR, raising=False)
    assert "multiprocess" in _settings_without_run_config(build_definitions(project.config))
