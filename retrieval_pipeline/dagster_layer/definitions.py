"""The code location: `dg dev`, `dagster dev -m retrieval_pipeline.definitions` and the component load `defs`.

The configuration is read when the definitions load, because the partitions are its sets and
retrievers ($RETRIEVAL_EVAL_CONFIG, else the embedded demo; $RETRIEVAL_EVAL_STORE replaces its store).
`build_definitions` brings no executor, so a team's project that declares its own keeps it (merged
Definitions may hold one). The standalone location runs every job in process: every run holds one
partition and one step, and a child process per step would only repeat the imports. A team scales out
with the run launcher in dagster.yaml (one worker per run, docs/production.md).
"""

from __future__ import annotations

import os
from pathlib import Path

from dagster import AssetSelection, Definitions, define_asset_job, definitions, in_process_executor

from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.dagster_layer.assets import build_assets
from retrieval_pipeline.dagster_layer.document_vectors import sharded_vectors
from retrieval_pipeline.dagster_layer.io_manager import ResultStoreIOManager
from retrieval_pipeline.dagster_layer.labels.acceptance import build_accept_baseline
from retrieval_pipeline.dagster_layer.labels.audit import build_label_audit
from retrieval_pipeline.dagster_layer.labels.judging import build_machine_judgements
from retrieval_pipeline.dagster_layer.names import Names
from retrieval_pipeline.dagster_layer.partitions import project_partitions
from retrieval_pipeline.dagster_layer.resources import project_resource
from retrieval_pipeline.dagster_layer.schedules import build_nightly_schedule
from retrieval_pipeline.dagster_layer.sensors import build_automation_sensor, build_index_version_sensor
from retrieval_pipeline.dagster_layer.traffic.coverage import build_traffic
from retrieval_pipeline.dagster_layer.traffic.generated import build_generated_agreement, build_generated_questions
from retrieval_pipeline.dagster_layer.traffic.sensor import build_query_log_sensor

SETS_JOB = "golden_question_set_job"
RETRIEVERS_JOB = "retriever_config_job"
EVALUATION_JOB = "retrieval_evaluation_job"
LEADERBOARD_JOB = "leaderboard_job"
LABEL_AUDIT_JOB = "label_audit_job"
GENERATED_AGREEMENT_JOB = "generated_set_agreement_job"
NIGHTLY_SERVER_ENV_VAR = "RETRIEVAL_EVAL_NIGHTLY_SERVER"
"""Set (by dagster_layer/launched_runs.py) in the code location `nightly` serves for its own runs only."""


def build_definitions(
    config_path: str | Path | None = None,
    store_uri: str | None = None,
    labels: str | None = None,
    traffic_log: str | None = None,
    prefix: str | None = None,
    automation: bool = True,
) -> Definitions:
    """`prefix` keeps one component instance's names apart from its host's and from other instances'
    (names.py); the job names above are the unprefixed ones. Without `automation`, no automation sensor:
    the code location `nightly` serves for its own runs refreshes the leaderboard and the audits itself,
    in the asset graph's order, and a sensor ticking beside it would launch the same runs twice."""
    names = Names(prefix)
    project = project_resource(config_path, store_uri, labels, traffic_log)
    config = load_config(project.resolved_config_path)
    partitions = project_partitions(config, source=project.config_path)
    golden_question_set, retriever_config, evaluation, leaderboard = build_assets(partitions, names)
    vectors = sharded_vectors(config, evaluation, names)
    label_audit = build_label_audit(partitions, names)
    agreement = build_generated_agreement(partitions, names)
    traffic = build_traffic(config, partitions.sets, names)
    jobs = [
        define_asset_job(names.name(SETS_JOB), [golden_question_set]),
        define_asset_job(names.name(RETRIEVERS_JOB), [retriever_config]),
        define_asset_job(
            names.name(EVALUATION_JOB), [vectors.evaluation], description="Evaluate one (set, retriever) partition."
        ),
        define_asset_job(names.name(LEADERBOARD_JOB), [leaderboard]),
        define_asset_job(names.name(LABEL_AUDIT_JOB), [label_audit]),
        define_asset_job(names.name(GENERATED_AGREEMENT_JOB), [agreement]),
        build_accept_baseline(names),
        *traffic.jobs,
        *vectors.jobs,
    ]
    # The shards first: `nightly` runs the roots of the asset graph in this order, so in process a dense
    # retriever's shards are encoded in their own steps before its retriever_config is built.
    assets = [*vectors.assets, golden_question_set, retriever_config, vectors.evaluation, leaderboard, label_audit]
    assets += [agreement, build_machine_judgements(names), build_generated_questions(names), *traffic.assets]
    return Definitions(
        assets=assets,
        jobs=jobs,
        schedules=[build_nightly_schedule(jobs[2], partitions, config.dagster, names)],
        sensors=[
            build_index_version_sensor(jobs[2], jobs[1], partitions, config.dagster, names),
            *([build_automation_sensor(AssetSelection.assets(*assets), config.dagster, names)] if automation else []),
            *([build_query_log_sensor(traffic, partitions.set_identifiers, config.dagster, names)] if traffic.assets else []),
        ],
        resources={
            names.resource: project,
            names.io_manager: ResultStoreIOManager(config_path=project.config_path, store_uri=project.store_uri),
        },
    )


@definitions
def defs() -> Definitions:
    automation = os.environ.get(NIGHTLY_SERVER_ENV_VAR) is None
    return Definitions.merge(build_definitions(automation=automation), Definitions(executor=in_process_executor))
