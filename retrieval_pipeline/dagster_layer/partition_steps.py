"""One step, one partition or a whole range of them: how the per-partition assets record their partitions.

Why: every Dagster run costs the instance about half a second of bookkeeping (the run record, its
event database, every event committed), whatever it evaluates. One run per partition made
`retrieval-eval nightly` spend ~0.8 s per partition on bookkeeping against ~0.1 s of evaluation
(benchmarks/bench_orchestration.py). So `nightly` runs each stage as one run over the range of its
partitions (Dagster's single-run backfill policy and range tags), while the schedule, the sensor and
the UI's Materialize run one partition each, so a team's workers still share them: the same body
serves both.

Dagster records a materialization for every partition of a range when the step succeeds and none when
it fails; it cannot fail one partition of a step (dagster-io/dagster#17836). The bodies therefore
record each partition themselves, as it finishes: its materialization, then its check evaluation,
against that materialization. A partition that fails records nothing, the others go on, and the step
fails at the end naming each failed partition and its error in the failure's `failed_partitions`
metadata. So the partitions that succeeded stay materialized, those that failed show as failed, and
`run_outcomes` reads the same events whether the run held one partition or a range. A run of one
partition lets its error through unchanged, traceback included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dagster import (
    AssetCheckEvaluation,
    AssetCheckResult,
    AssetExecutionContext,
    AssetMaterialization,
    AssetRecordsFilter,
    Failure,
    MetadataValue,
)

from retrieval_pipeline.core.secrets import scrub, scrubbed_errors

FAILED_PARTITIONS = "failed_partitions"
"""Failure metadata: partition key -> {"error": message, "error_classes": class names along its causes}."""


@dataclass(frozen=True)
class PartitionDone:
    """What a body computed for one partition: its materialization's metadata and, if any, its check result."""

    metadata: Mapping[str, Any]
    check: AssetCheckResult | None = None


def materialize_each(context: AssetExecutionContext, compute: Callable[[str], PartitionDone]) -> Iterator[Any]:
    """Yields the events of every partition the step targets; see the module docstring."""
    keys = list(context.partition_keys)
    failed: dict[str, dict[str, Any]] = {}
    for key in keys:
        try:
            with scrubbed_errors():
                done = compute(key)
        except Exception as error:
            if len(keys) == 1:
                raise
            failed[key] = {"error": scrub(str(error)) or type(error).__name__, "error_classes": _class_names(error)}
            context.log.error(f"partition {key} failed: {type(error).__name__}: {failed[key]['error']}")
            continue
        yield AssetMaterialization(asset_key=context.asset_key, partition=key, metadata=done.metadata)
        if done.check is not None:
            yield _evaluation(context, key, done.check)
    if failed:
        raise Failure(
            description=f"{len(failed)} of {len(keys)} partitions failed: "
            + "; ".join(f"{key}: {record['error']}" for key, record in failed.items()),
            metadata={FAILED_PARTITIONS: MetadataValue.json(failed)},
            allow_retries=False,
        )


def _evaluation(context: AssetExecutionContext, key: str, result: AssetCheckResult) -> AssetCheckEvaluation:
    """The check result of one partition, recorded against the materialization just written for it
    (Dagster only derives the partition and the target itself when a run holds a single partition)."""
    from dagster._core.definitions.asset_checks.asset_check_evaluation import AssetCheckEvaluationTargetMaterializationData

    records = context.instance.fetch_materializations(
        AssetRecordsFilter(asset_key=context.asset_key, asset_partitions=[key]), limit=1
    ).records
    target = (
        AssetCheckEvaluationTargetMaterializationData(
            run_id=records[0].event_log_entry.run_id, storage_id=records[0].storage_id, timestamp=records[0].timestamp
        )
        if records
        else None
    )
    return AssetCheckEvaluation(
        asset_key=context.asset_key,
        check_name=result.check_name,
        passed=result.passed,
        metadata=result.metadata,
        severity=result.severity,
        description=result.description,
        partition=key,
        blocking=False,  # the regression check, the only one recorded here, never blocks
        target_materialization_data=target,
    )


def _class_names(error: BaseException | None) -> list[str]:
    """As Dagster's serialized errors name them, so `run_outcomes` classifies both alike."""
    names = []
    while error is not None:
        names.append(type(error).__name__)
        error = error.__cause__ or error.__context__
    return names
