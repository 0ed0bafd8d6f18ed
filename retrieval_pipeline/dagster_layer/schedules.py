"""The nightly schedule: one run per evaluation partition, at the configuration's cron and timezone."""

from datetime import datetime, timezone

from dagster import RunRequest, ScheduleDefinition, ScheduleEvaluationContext, schedule

from retrieval_pipeline.core.services.configuration.schema import DagsterSection
from retrieval_pipeline.dagster_layer.names import Names
from retrieval_pipeline.dagster_layer.partitions import ProjectPartitions

NIGHTLY_SCHEDULE = "nightly_retrieval_evaluation"
TRIGGER_TAG = "retrieval_pipeline/trigger"


def build_nightly_schedule(job, partitions: ProjectPartitions, section: DagsterSection, names: Names) -> ScheduleDefinition:
    @schedule(
        name=names.name(NIGHTLY_SCHEDULE),
        job=job,
        cron_schedule=section.nightly_cron,
        execution_timezone=section.timezone,
        description="Evaluates every (set, retriever) partition: one run each, keyed by tick and partition.",
    )
    def nightly_retrieval_evaluation(context: ScheduleEvaluationContext):
        tick = _tick_time(context)
        for key in partitions.evaluation_keys():
            yield RunRequest(run_key=f"{tick.isoformat()}|{key}", partition_key=key, tags={TRIGGER_TAG: "nightly"})

    return nightly_retrieval_evaluation


def _tick_time(context: ScheduleEvaluationContext) -> datetime:
    """The tick's scheduled time; a context built without one (a manual test evaluation) uses now."""
    try:
        return context.scheduled_execution_time
    except Exception:  # Dagster refuses the attribute when no time was set
        return datetime.now(timezone.utc)
