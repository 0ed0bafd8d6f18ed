"""Dagster's floor for `bench_orchestration.py`: a trivial partitioned asset with a passing check, as a
code location of its own (`dagster dev -m orchestration_floor`, with benchmarks/ on PYTHONPATH), so that
its runs are made the two ways `nightly` makes them: in process, and launched through the instance."""

from __future__ import annotations

from dagster import (
    AssetCheckResult,
    AssetCheckSpec,
    Definitions,
    MaterializeResult,
    StaticPartitionsDefinition,
    asset,
    define_asset_job,
    in_process_executor,
)

PARTITIONS = StaticPartitionsDefinition([f"p{number:02d}" for number in range(64)])
JOB = "floor_job"


@asset(partitions_def=PARTITIONS, check_specs=[AssetCheckSpec("passes", asset="floor")])
def floor() -> MaterializeResult:
    return MaterializeResult(metadata={"value": 1.0}, check_results=[AssetCheckResult(passed=True)])


defs = Definitions(assets=[floor], jobs=[define_asset_job(JOB, [floor])], executor=in_process_executor)
