"""The executor of every job, chosen by environment: $RETRIEVAL_EVAL_EXECUTOR and its settings file.

Schedules, sensors, backfills and `retrieval-eval nightly --launch` start runs without run
configuration, so an executor whose defaults do not fit the deployment (Celery's broker is RabbitMQ
on `$DAGSTER_CELERY_BROKER_HOST:5672`; Dask has no default cluster) would hang or fail on every such
run. Its settings therefore come from the YAML file named by $RETRIEVAL_EVAL_EXECUTOR_CONFIG, bound
with the executor's `configured`, and are checked when the definitions load: an integration executor
without that file, or with settings it rejects, refuses to load with one line naming the variable or
the file and the field.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import yaml

from retrieval_pipeline.core.base.errors import InvalidInputError

EXECUTOR_ENV_VAR = "RETRIEVAL_EVAL_EXECUTOR"
EXECUTOR_CONFIG_ENV_VAR = "RETRIEVAL_EVAL_EXECUTOR_CONFIG"
EXECUTORS = {
    "multiprocess": ("dagster", "multiprocess_executor", "dagster"),
    "in_process": ("dagster", "in_process_executor", "dagster"),
    "celery": ("dagster_celery", "celery_executor", "dagster-celery"),
    "k8s": ("dagster_k8s", "k8s_job_executor", "dagster-k8s"),
    "dask": ("dagster_dask", "dask_executor", "dagster-dask"),
    "docker": ("dagster_docker", "docker_executor", "dagster-docker"),
}
# Dagster's own executors work unconfigured; every integration executor needs its deployment's settings.
SELF_SUFFICIENT = frozenset({"multiprocess", "in_process"})


def executor_from_environment():
    """The executor named by $RETRIEVAL_EVAL_EXECUTOR, bound to its settings file; None for Dagster's default."""
    name = os.environ.get(EXECUTOR_ENV_VAR, "").strip()
    if not name:
        return None
    if name not in EXECUTORS:
        raise InvalidInputError(f"unknown executor {name!r}; use one of {', '.join(EXECUTORS)}", source=f"${EXECUTOR_ENV_VAR}")
    settings_path = os.environ.get(EXECUTOR_CONFIG_ENV_VAR, "").strip()
    if not settings_path and name not in SELF_SUFFICIENT:
        raise InvalidInputError(
            f"the {name} executor needs its settings for runs started without run configuration (schedules, "
            f"sensors, backfills, nightly --launch): set ${EXECUTOR_CONFIG_ENV_VAR} to a YAML file of them "
            "(see deploy/executors/)",
            source=f"${EXECUTOR_ENV_VAR}",
        )
    module, attribute, package = EXECUTORS[name]
    try:
        executor = getattr(importlib.import_module(module), attribute)
    except ImportError:
        raise InvalidInputError(
            f"the {name} executor needs the {package} package (pip install {package})", source=f"${EXECUTOR_ENV_VAR}"
        ) from None
    return executor.configured(_settings(Path(settings_path)), name=name) if settings_path else executor


def check_executor_settings(job) -> None:
    """Resolve the job's run configuration as a schedule tick would (none given), so bad settings fail the load."""
    from dagster import DagsterInvalidConfigError, validate_run_config

    try:
        validate_run_config(job, {})
    except DagsterInvalidConfigError as error:
        problems = "; ".join(e.message for e in error.errors)
        raise InvalidInputError(
            f"executor settings rejected: {problems}", source=os.environ.get(EXECUTOR_CONFIG_ENV_VAR)
        ) from None


def _settings(path: Path) -> dict:
    try:
        settings = yaml.safe_load(path.expanduser().read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise InvalidInputError(f"cannot read the executor settings: {error}", source=str(path)) from None
    if not isinstance(settings, dict):
        raise InvalidInputError("the executor settings must be a mapping of the executor's config fields", source=str(path))
    return settings
