"""The Dagster code location: `dagster dev` (or `-m retrieval_pipeline.dagster_layer.definitions`) loads `defs`.

The configuration is read when the definitions load, because the partitions are its sets and
retrievers ($RETRIEVAL_EVAL_CONFIG, else the embedded demo; $RETRIEVAL_EVAL_STORE replaces its store).
The executor is picked by the environment too, without a code change (executors.py), and each run
evaluates its partitions in one step (partition_steps.py), so a team scales out with the run launcher
in dagster.yaml, see docs/production.md. The leaderboard and each set's label audit refresh themselves
once the evaluations of a schedule tick, a sensor request or a launch have all finished.
"""

from __future__ import annotations

from pathlib import Path

from dagster import Definitions, define_asset_job, definitions

from retrieval_pipeline.core.services.config import load_config
from retrieval_pipeline.dagster_layer.acceptance import accept_baseline
from retrieval_pipeline.dagster_layer.assets import GROUP, build_assets
from retrieval_pipeline.dagster_layer.audit import build_label_audit
from retrieval_pipeline.dagster_layer.document_vectors import sharded_vectors
from retrieval_pipeline.dagster_layer.executors import check_executor_settings, executor_from_environment
from retrieval_pipeline.dagster_layer.io_manager import RESULT_STORE_IO_MANAGER, ResultStoreIOManager
from retrieval_pipeline.dagster_layer.judging import machine_judgements
from retrieval_pipeline.dagster_layer.partitions import project_partitions
from retrieval_pipeline.dagster_layer.resources import project_resource
from retrieval_pipeline.dagster_layer.schedules import build_nightly_schedule
from retrieval_pipeline.dagster_layer.sensors import (
    build_index_version_sensor,
    build_label_audit_automation,
    build_leaderboard_automation,
)
from retrieval_pipeline.dagster_layer.traffic import build_traffic
from retrieval_pipeline.dagster_layer.traffic_sensor import build_query_log_sensor

SETS_JOB = "golden_question_set_job"
RETRIEVERS_JOB = "retriever_config_job"
EVALUATION_JOB = "retrieval_evaluation_job"
LEADERBOARD_JOB = "leaderboard_job"


def build_definitions(
    config_path: str | Path | None = None,
    store_uri: str | None = None,
    labels: str | None = None,
    traffic_log: str | None = None,
) -> Definitions:
    project = project_resource(config_path, store_uri, labels, traffic_log)
    config = load_config(project.resolved_config_path)
    partitions = project_partitions(config, source=project.config_path)
    golden_question_set, retriever_config, evaluation, leaderboard = build_assets(partitions)
    vectors = sharded_vectors(config, evaluation, GROUP)
    label_audit = build_label_audit(partitions, GROUP)
    sets_job = define_asset_job(SETS_JOB, [golden_question_set])
    retrievers_job = define_asset_job(RETRIEVERS_JOB, [retriever_config])
    evaluation_job = define_asset_job(
        EVALUATION_JOB,
        [vectors.evaluation],
        description="Evaluate one (set, retriever) partition and check it for regressions.",
    )
    leaderboard_job = define_asset_job(LEADERBOARD_JOB, [leaderboard])
    traffic = build_traffic(config, partitions.sets)
    traffic_sensors = [build_query_log_sensor(traffic, partitions.set_identifiers, config.dagster)] if traffic.assets else []
    defs = Definitions(
        assets=[
            golden_question_set,
            retriever_config,
            vectors.evaluation,
            leaderboard,
            label_audit,
            machine_judgements,
            *traffic.assets,
            *vectors.assets,
        ],
        jobs=[sets_job, retrievers_job, evaluation_job, leaderboard_job, accept_baseline, *traffic.jobs, *vectors.jobs],
        schedules=[build_nightly_schedule(evaluation_job, partitions, config.dagster)],
        sensors=[
            build_index_version_sensor(evaluation_job, retrievers_job, partitions, config.dagster),
            build_leaderboard_automation(leaderboard, evaluation_job, config.dagster),
            build_label_audit_automation(label_audit, config.dagster),
            *traffic_sensors,
        ],
        resources={
            "project": project,
            RESULT_STORE_IO_MANAGER: ResultStoreIOManager(config_path=project.config_path, store_uri=project.store_uri),
        },
        executor=executor_from_environment(),
    )
    check_executor_settings(defs.resolve_job_def(EVALUATION_JOB))
    return defs


@definitions
def defs() -> Definitions:
    return build_definitions()
