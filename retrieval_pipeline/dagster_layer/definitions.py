"""The code location: `dg dev`, `dagster dev -m retrieval_pipeline.definitions` and the component load `defs`.

The configuration is read when the definitions load, because the partitions are its sets and
retrievers ($RETRIEVAL_EVAL_CONFIG, else the embedded demo; $RETRIEVAL_EVAL_STORE replaces its store).
Every run holds one partition and one step, so every job runs in process: a child process per step
would only repeat the imports. A team scales out with the run launcher in dagster.yaml (one worker per
run, docs/production.md).
"""

from __future__ import annotations

from pathlib import Path

from dagster import Definitions, define_asset_job, definitions, in_process_executor

from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.dagster_layer.assets import GROUP, build_assets
from retrieval_pipeline.dagster_layer.document_vectors import sharded_vectors
from retrieval_pipeline.dagster_layer.io_manager import RESULT_STORE_IO_MANAGER, ResultStoreIOManager
from retrieval_pipeline.dagster_layer.labels.acceptance import accept_baseline
from retrieval_pipeline.dagster_layer.labels.audit import build_label_audit
from retrieval_pipeline.dagster_layer.labels.judging import machine_judgements
from retrieval_pipeline.dagster_layer.partitions import project_partitions
from retrieval_pipeline.dagster_layer.resources import project_resource
from retrieval_pipeline.dagster_layer.schedules import build_nightly_schedule
from retrieval_pipeline.dagster_layer.sensors import build_automation_sensor, build_index_version_sensor
from retrieval_pipeline.dagster_layer.traffic.coverage import build_traffic
from retrieval_pipeline.dagster_layer.traffic.generated import build_generated_agreement, generated_questions
from retrieval_pipeline.dagster_layer.traffic.sensor import build_query_log_sensor

SETS_JOB = "golden_question_set_job"
RETRIEVERS_JOB = "retriever_config_job"
EVALUATION_JOB = "retrieval_evaluation_job"
LEADERBOARD_JOB = "leaderboard_job"
LABEL_AUDIT_JOB = "label_audit_job"
GENERATED_AGREEMENT_JOB = "generated_set_agreement_job"


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
    agreement = build_generated_agreement(partitions, GROUP)
    traffic = build_traffic(config, partitions.sets)
    jobs = [
        define_asset_job(SETS_JOB, [golden_question_set]),
        define_asset_job(RETRIEVERS_JOB, [retriever_config]),
        define_asset_job(EVALUATION_JOB, [vectors.evaluation], description="Evaluate one (set, retriever) partition."),
        define_asset_job(LEADERBOARD_JOB, [leaderboard]),
        define_asset_job(LABEL_AUDIT_JOB, [label_audit]),
        define_asset_job(GENERATED_AGREEMENT_JOB, [agreement]),
        accept_baseline,
        *traffic.jobs,
        *vectors.jobs,
    ]
    return Definitions(
        assets=[golden_question_set, retriever_config, vectors.evaluation, leaderboard, label_audit, agreement]
        + [machine_judgements, generated_questions, *traffic.assets, *vectors.assets],
        jobs=jobs,
        schedules=[build_nightly_schedule(jobs[2], partitions, config.dagster)],
        sensors=[
            build_index_version_sensor(jobs[2], jobs[1], partitions, config.dagster),
            build_automation_sensor(config.dagster),
            *([build_query_log_sensor(traffic, partitions.set_identifiers, config.dagster)] if traffic.assets else []),
        ],
        resources={
            "project": project,
            RESULT_STORE_IO_MANAGER: ResultStoreIOManager(config_path=project.config_path, store_uri=project.store_uri),
        },
        executor=in_process_executor,
    )


@definitions
def defs() -> Definitions:
    return build_definitions()
