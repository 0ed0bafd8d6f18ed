"""The index-rebuild sensor: a new index version of a retriever evaluates every set against it, once
(the version is in every run key, so even a lost cursor cannot request it twice); and the automation
sensor of the declarative conditions, over this location's own assets only. A sensor, not an observable source asset: a new version needs the
retriever rebuilt and every set evaluated against it, which only requests can say (docs/dagster.md).
"""

import json

from dagster import (
    AssetSelection,
    AutomationCondition,
    AutomationConditionSensorDefinition,
    DefaultSensorStatus,
    RunRequest,
    SensorDefinition,
    SensorEvaluationContext,
    SensorResult,
    sensor,
)

from retrieval_pipeline.core.services.configuration.schema import DagsterSection
from retrieval_pipeline.core.services.evaluation.index_versions import new_index_versions
from retrieval_pipeline.dagster_layer.names import Names
from retrieval_pipeline.dagster_layer.partitions import ProjectPartitions
from retrieval_pipeline.dagster_layer.schedules import TRIGGER_TAG

INDEX_SENSOR = "index_version_sensor"
AUTOMATION_SENSOR = "retrieval_automation"


def after_upstream() -> AutomationCondition:
    """Dagster's `eager()` less its wait for missing dependencies, and woken by a failed dependency too: a
    pair that regressed or never built fails instead of materializing, and the leaderboard and the audit
    must then say so, not wait for it."""
    failed = AutomationCondition.any_deps_match(AutomationCondition.execution_failed().newly_true())
    return (
        (AutomationCondition.any_deps_updated() | failed).since_last_handled()
        & ~AutomationCondition.any_deps_in_progress()
        & ~AutomationCondition.in_progress()
    ).with_label("after_upstream")


# Dagster's own default interval for automation sensors; a faster index sensor makes this one faster too.
AUTOMATION_INTERVAL_SECONDS = 30


def build_index_version_sensor(
    evaluation_job, retriever_job, partitions: ProjectPartitions, section: DagsterSection, names: Names
) -> SensorDefinition:
    @sensor(
        name=names.name(INDEX_SENSOR),
        jobs=[evaluation_job, retriever_job],
        required_resource_keys={names.resource},
        minimum_interval_seconds=section.sensor_interval_seconds,
        default_status=DefaultSensorStatus.STOPPED,
        description="Evaluates every set against a retriever whose index version changed, once per version.",
    )
    def index_version_sensor(context: SensorEvaluationContext) -> SensorResult:
        project = names.project(context)
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


def build_automation_sensor(
    own_assets: AssetSelection, section: DagsterSection, names: Names
) -> AutomationConditionSensorDefinition:
    """Running by default, so the leaderboard, the label audits, the generated questions' agreements and the
    coverage follow the schedule's, the sensor's and the UI's evaluations with nothing to switch on (their
    condition: `after_upstream`). A sensor of its own rather than Dagster's default one, which starts
    stopped until someone switches it on, at its own 30 s: this one runs from the start, at least as often
    as the index sensor. It targets only `own_assets`: a host project's automation sensor (or a second
    instance's) may not overlap it, and the host's assets are the host's to automate."""
    return AutomationConditionSensorDefinition(
        names.name(AUTOMATION_SENSOR),
        target=own_assets,
        default_status=DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=min(AUTOMATION_INTERVAL_SECONDS, section.sensor_interval_seconds),
        description="Refreshes the leaderboard, each set's label audit and generated questions' agreement, and the "
        "coverage once the evaluations (or query logs) they read have finished, passed or failed.",
    )
