"""The index-rebuild sensor: a new index version of a retriever evaluates every set against it, once.

Each retriever that reports an index version is asked for it at every tick (the core's
`new_index_versions`, which also says what a retriever seen for the first time needs); a version other
than the cursor's requests that retriever's partitions. The version is in every run key, so even a lost
cursor cannot request a version twice. Also the automation sensors of the leaderboard and the label audit.
"""

import json

from dagster import (
    AssetKey,
    AutomationConditionSensorDefinition,
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorDefinition,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from retrieval_pipeline.core.services.config_file import DagsterSection
from retrieval_pipeline.core.services.index_versions import new_index_versions
from retrieval_pipeline.dagster_layer.checks import EVALUATION_ASSET
from retrieval_pipeline.dagster_layer.partitions import ProjectPartitions
from retrieval_pipeline.dagster_layer.resources import RetrievalProject
from retrieval_pipeline.dagster_layer.schedules import TRIGGER_TAG

INDEX_SENSOR = "index_version_sensor"
LEADERBOARD_AUTOMATION = "leaderboard_automation"
LABEL_AUDIT_AUTOMATION = "label_audit_automation"
IN_FLIGHT = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED]
# Dagster's own default interval for automation sensors; a faster index sensor makes this one faster too.
AUTOMATION_INTERVAL_SECONDS = 30


def build_index_version_sensor(
    evaluation_job, retriever_job, partitions: ProjectPartitions, section: DagsterSection
) -> SensorDefinition:
    @sensor(
        name=INDEX_SENSOR,
        jobs=[evaluation_job, retriever_job],
        minimum_interval_seconds=section.sensor_interval_seconds,
        default_status=DefaultSensorStatus.STOPPED,
        description="Evaluates every set against a retriever whose index version changed, once per version.",
    )
    def index_version_sensor(context: SensorEvaluationContext, project: RetrievalProject) -> SensorResult:
        pairs = (partitions.set_identifiers, partitions.retriever_identifiers)
        seen = json.loads(context.cursor) if context.cursor else {}
        found, seen = new_index_versions(project.config, pairs, lambda: project.store(context.log), seen, context.log.warning)
        tags = {TRIGGER_TAG: "index_version"}
        requests: list[RunRequest] = []
        for new in found:
            retriever, sets = new.retriever_identifier, new.set_identifiers
            context.log.info(f"retriever '{retriever}': index version {new.version} is new; evaluating {len(sets)} set(s)")
            run_key = f"{retriever}@{new.version}"
            requests.append(RunRequest(run_key=run_key, job_name=retriever_job.name, partition_key=retriever, tags=tags))
            requests.extend(
                RunRequest(
                    run_key=f"{run_key}|{set_identifier}",
                    job_name=evaluation_job.name,
                    partition_key=partitions.evaluation_key(set_identifier, retriever),
                    tags=tags,
                )
                for set_identifier in sets
            )
        cursor = json.dumps(seen, sort_keys=True)
        if not requests:
            return SensorResult(skip_reason="No new index version.", cursor=cursor)
        return SensorResult(run_requests=requests, cursor=cursor)

    return index_version_sensor


def build_leaderboard_automation(leaderboard, evaluation_job, section: DagsterSection) -> SensorDefinition:
    """Running by default, so the leaderboard follows the schedule's, the sensor's and the UI's evaluations
    with nothing to switch on: a refresh is requested once the newest evaluation is newer than the
    leaderboard and the refresh last requested, and no evaluation is queued or running.

    A plain sensor comparing event storage ids rather than Dagster's `eager()` condition: `eager()` lost
    evaluations that finished in the tick after it had requested a refresh (its reset, "handled", wins a
    tick in which the dependencies also updated), leaving the leaderboard one batch behind in about one
    team-test run in three. Storage ids only grow, so nothing finished after a request can be missed.
    """

    @sensor(
        name=LEADERBOARD_AUTOMATION,
        asset_selection=[leaderboard],
        default_status=DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=min(AUTOMATION_INTERVAL_SECONDS, section.sensor_interval_seconds),
        description="Refreshes the leaderboard after new evaluations, once none is still queued or running.",
    )
    def leaderboard_automation(context: SensorEvaluationContext) -> SensorResult | SkipReason:
        instance = context.instance
        newest = _newest_storage_id(instance, AssetKey(EVALUATION_ASSET))
        shown = max(int(context.cursor or 0), _newest_storage_id(instance, leaderboard.key) or 0)
        if newest is None or newest <= shown:
            return SkipReason("The leaderboard already shows the newest evaluation.")
        if _evaluations_in_flight(instance, evaluation_job.name, leaderboard.key):
            return SkipReason("Evaluations (or a refresh) are still queued or running.")
        return SensorResult(run_requests=[RunRequest(run_key=f"after-evaluation-{newest}")], cursor=str(newest))

    return leaderboard_automation


def build_label_audit_automation(label_audit, section: DagsterSection) -> AutomationConditionSensorDefinition:
    """Running by default: the label audit of a set follows its evaluations (eager: once none is in
    flight), and covering it keeps Dagster's default automation sensor away."""
    return AutomationConditionSensorDefinition(
        LABEL_AUDIT_AUTOMATION,
        target=[label_audit],
        default_status=DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=min(AUTOMATION_INTERVAL_SECONDS, section.sensor_interval_seconds),
        description="Refreshes each set's label audit after its evaluations, once none is still in progress.",
    )


def _newest_storage_id(instance, key: AssetKey) -> int | None:
    records = instance.fetch_materializations(key, limit=1).records
    return records[0].storage_id if records else None


def _evaluations_in_flight(instance, evaluation_job_name: str, leaderboard_key: AssetKey) -> bool:
    watched = {AssetKey(EVALUATION_ASSET), leaderboard_key}
    return any(
        run.job_name == evaluation_job_name or watched & set(run.asset_selection or ())
        for run in instance.get_runs(filters=RunsFilter(statuses=IN_FLIGHT))
    )
