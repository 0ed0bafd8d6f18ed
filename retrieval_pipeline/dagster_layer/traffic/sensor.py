"""The query-log sensor: a log file that appeared or changed (its size or modification time, the cursor)
is counted again (`query_log`) and its coverage by every set measured again (`coverage`).

A log that is only appended to grows, so a new day of traffic is noticed at the next tick; the run keys
hold the size and time, so a lost cursor never requests the same state twice.
"""

from __future__ import annotations

import json
import os

from dagster import DefaultSensorStatus, RunRequest, SensorDefinition, SensorEvaluationContext, SensorResult, sensor

from retrieval_pipeline.core.services.configuration.schema import DagsterSection
from retrieval_pipeline.dagster_layer.names import Names
from retrieval_pipeline.dagster_layer.schedules import TRIGGER_TAG
from retrieval_pipeline.dagster_layer.traffic.coverage import TrafficDefinitions, coverage_key

QUERY_LOG_SENSOR = "query_log_sensor"


def build_query_log_sensor(
    traffic: TrafficDefinitions, sets: tuple[str, ...], section: DagsterSection, names: Names
) -> SensorDefinition:
    query_log_job, coverage_job = traffic.jobs

    @sensor(
        name=names.name(QUERY_LOG_SENSOR),
        jobs=[query_log_job, coverage_job],
        required_resource_keys={names.resource},
        minimum_interval_seconds=section.sensor_interval_seconds,
        default_status=DefaultSensorStatus.STOPPED,
        description="Counts a query log again, and measures its coverage by every set, when its file appears or grows.",
    )
    def query_log_sensor(context: SensorEvaluationContext) -> SensorResult:
        project = names.project(context)
        seen: dict[str, list[int]] = json.loads(context.cursor) if context.cursor else {}
        requests: list[RunRequest] = []
        for log in project.config.query_logs:
            _, path = project.config.query_log(log)
            try:
                state = os.stat(path)
            except OSError:  # not written yet: nothing to count
                continue
            now = [state.st_size, state.st_mtime_ns]
            if seen.get(log) == now:
                continue
            seen[log] = now
            context.log.info(f"query log '{log}' is new or changed ({state.st_size:,} bytes); counting and measuring it")
            run_key = f"{log}@{state.st_size}-{state.st_mtime_ns}"
            tags = {TRIGGER_TAG: "query_log"}
            requests.append(RunRequest(run_key=run_key, job_name=query_log_job.name, partition_key=log, tags=tags))
            requests.extend(
                RunRequest(
                    run_key=f"{set_identifier}/{run_key}",
                    job_name=coverage_job.name,
                    partition_key=coverage_key(set_identifier, log),
                    tags=tags,
                )
                for set_identifier in sets
            )
        return SensorResult(run_requests=requests, cursor=json.dumps(seen, sort_keys=True))

    return query_log_sensor
