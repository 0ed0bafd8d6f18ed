"""Query logs and coverage in Dagster: a `query_log` asset (one partition per configured log), a
`coverage` asset per (set, log) with a `coverage_min_share` check that warns below `coverage.min_share`,
and their jobs; `sensor.py` runs them when a log file appears or grows. Absent (no assets) when
the configuration names no query log. The bodies call the core's `read_log` and `measure_coverage`.
"""

from dataclasses import dataclass
from datetime import datetime, timezone

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetDep,
    AssetExecutionContext,
    AssetRecordsFilter,
    AssetsDefinition,
    AutomationCondition,
    MaterializeResult,
    MultiPartitionKey,
    MultiPartitionsDefinition,
    StaticPartitionsDefinition,
    asset,
    define_asset_job,
)

from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.services.traffic.coverage import measure_coverage, read_log
from retrieval_pipeline.core.services.views.coverage_view import coverage_view
from retrieval_pipeline.dagster_layer.metadata.traffic import coverage_metadata, query_log_metadata
from retrieval_pipeline.dagster_layer.metadata.values import typed
from retrieval_pipeline.dagster_layer.names import COVERAGE_ASSET, QUERY_LOG_ASSET, SET_ASSET, TRAFFIC_GROUP, Names
from retrieval_pipeline.dagster_layer.partitions import SET_DIMENSION, key_dimensions, one_dimension
from retrieval_pipeline.dagster_layer.sensors import after_upstream

LOG_DIMENSION = "log"
COVERAGE_CHECK = "coverage_min_share"
QUERY_LOG_JOB, COVERAGE_JOB = "query_log_job", "coverage_job"
HISTORY = 60
"""Earlier materializations of a (set, log) charted with the latest."""


@dataclass(frozen=True)
class TrafficDefinitions:
    assets: tuple[AssetsDefinition, ...] = ()
    jobs: tuple = ()
    """The query_log job and the coverage job (what define_asset_job returns)."""
    logs: StaticPartitionsDefinition | None = None
    coverages: MultiPartitionsDefinition | None = None


def build_traffic(config: ProjectConfig, sets: StaticPartitionsDefinition, names: Names) -> TrafficDefinitions:
    if not config.query_logs:
        return TrafficDefinitions()
    logs = StaticPartitionsDefinition(list(config.query_logs))
    coverages = MultiPartitionsDefinition({SET_DIMENSION: sets, LOG_DIMENSION: logs})

    @asset(
        key=names.key(QUERY_LOG_ASSET),
        partitions_def=logs,
        group_name=names.name(TRAFFIC_GROUP),
        required_resource_keys={names.resource},
        automation_condition=AutomationCondition.on_cron(config.dagster.nightly_cron, config.dagster.timezone),
        description="A configured query log, counted: at the nightly schedule's time, and when its file grows.",
    )
    def query_log(context: AssetExecutionContext) -> MaterializeResult:
        return MaterializeResult(
            metadata=typed(query_log_metadata(read_log(names.project(context).config, context.partition_key)))
        )

    @asset(
        key=names.key(COVERAGE_ASSET),
        partitions_def=coverages,
        group_name=names.name(TRAFFIC_GROUP),
        required_resource_keys={names.resource},
        deps=[
            AssetDep(query_log, partition_mapping=one_dimension(LOG_DIMENSION)),
            AssetDep(names.key(SET_ASSET), partition_mapping=one_dimension(SET_DIMENSION)),
        ],
        check_specs=[
            AssetCheckSpec(COVERAGE_CHECK, asset=names.key(COVERAGE_ASSET), description="Warns below coverage.min_share.")
        ],
        automation_condition=after_upstream(),
        description="How much of a log's traffic a set covers, its uncovered clusters, and the covered share's history; "
        "measured again once its log is counted again.",
    )
    def coverage(context: AssetExecutionContext) -> MaterializeResult:
        set_identifier, log = key_dimensions(coverages, context.partition_key, SET_DIMENSION, LOG_DIMENSION)
        config = names.project(context).config
        view = coverage_view(measure_coverage(config, config.question_set(set_identifier), log), set_identifier, log)
        chart = _history_chart(context, view.covered_share or 0.0, config.coverage.min_share, f"{set_identifier} × {log}")
        metadata = typed(coverage_metadata(view, chart))
        return MaterializeResult(metadata=metadata, check_results=[_check(view, config.coverage.min_share)])

    jobs = (define_asset_job(names.name(QUERY_LOG_JOB), [query_log]), define_asset_job(names.name(COVERAGE_JOB), [coverage]))
    return TrafficDefinitions((query_log, coverage), jobs, logs, coverages)


def coverage_key(set_identifier: str, log: str) -> MultiPartitionKey:
    return MultiPartitionKey({SET_DIMENSION: set_identifier, LOG_DIMENSION: log})


def _check(view, min_share: float) -> AssetCheckResult:
    share = view.covered_share or 0.0
    return AssetCheckResult(
        check_name=COVERAGE_CHECK,
        passed=share >= min_share,
        severity=AssetCheckSeverity.WARN,
        metadata={"covered_share": share, "min_share": min_share},
        description=f"{100 * share:.1f}% of {view.total:,} queries covered; warns below {100 * min_share:g}%.",
    )


def _history_chart(context: AssetExecutionContext, share: float, min_share: float, title: str) -> str:
    """The partition's earlier covered shares, read back from the instance's materializations, and this one."""
    from retrieval_pipeline.reports.charts import markdown_image
    from retrieval_pipeline.reports.coverage_chart import coverage_history_png

    records = context.instance.fetch_materializations(
        AssetRecordsFilter(asset_key=context.asset_key, asset_partitions=[str(context.partition_key)]), limit=HISTORY
    ).records
    earlier = [
        (datetime.fromtimestamp(record.timestamp, timezone.utc), record.asset_materialization.metadata["covered_share"].value)
        for record in reversed(records)
        if "covered_share" in record.asset_materialization.metadata
    ]
    points = [*earlier, (datetime.now(timezone.utc), share)]
    png = coverage_history_png([t for t, _ in points], [s for _, s in points], min_share, title)
    return markdown_image(png, f"covered share of {title}, last {len(points)} materializations")
