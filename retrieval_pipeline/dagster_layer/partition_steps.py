"""One step, one partition or a whole range of them: how the per-partition assets record their partitions.

`nightly` runs each stage as one run over a range of partitions, because a run's bookkeeping costs the
same whatever it evaluates, while the schedule, the sensor and the UI run one partition each; the same
body serves both. Dagster cannot fail one partition of a step (dagster-io/dagster#17836), so the body
records each partition as it finishes, its materialization then its check evaluation, and one that
fails records nothing while the others go on; the step then fails naming each failed partition and its
error (`FAILED_PARTITIONS`), which `run_outcomes` reads alike for one partition or a range. A blocking
check that fails records both, then fails its partition, as Dagster fails the run of a blocking check.
A run of one partition lets its error through unchanged, traceback included. See docs/dagster.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dagster import (
    AssetCheckEvaluation,
    AssetCheckResult,
    AssetExecutionContext,
    AssetKey,
    AssetMaterialization,
    AssetRecordsFilter,
    Failure,
    MetadataValue,
)

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.secrets import scrub, scrubbed_errors
from retrieval_pipeline.dagster_layer.dagster_gaps import materialization_target

FAILED_PARTITIONS = "failed_partitions"
"""Failure metadata: partition key -> {"error": message, "error_classes": class names along its causes}."""


@dataclass(frozen=True)
class PartitionDone:
    """What a body computed for one partition: its materialization's metadata and, if any, its check result."""

    metadata: Mapping[str, Any]
    check: AssetCheckResult | None = None


def materialize_each(context: AssetExecutionContext, asset: str, compute: Callable[[str], PartitionDone]) -> Iterator[Any]:
    """Yields the events of every partition the step targets; see the module docstring. `asset` is not
    materialized when it is not selected: only its check runs (the UI's "Execute" on the check)."""
    keys = list(context.partition_keys)
    asset_key = AssetKey(asset)
    materialized = asset_key in context.selected_asset_keys
    failed: dict[str, dict[str, Any]] = {}

    def attempt(key: str, step: Callable[[], Any]) -> Any:
        try:
            with scrubbed_errors():
                return step()
        except Exception as error:
            if len(keys) == 1:
                raise
            failed[key] = {"error": scrub(str(error)) or type(error).__name__, "error_classes": _class_names(error)}
            context.log.error(f"partition {key} failed: {type(error).__name__}: {failed[key]['error']}")
            return None

    for key in keys:
        done = attempt(key, lambda key=key: compute(key))
        if done is None:
            continue
        if materialized:
            yield AssetMaterialization(asset_key=asset_key, partition=key, metadata=done.metadata)
        if done.check is not None:
            evaluation = _evaluation(context, asset_key, key, done.check)
            yield evaluation
            if evaluation.blocking and not evaluation.passed:
                attempt(key, lambda evaluation=evaluation: _blocked(evaluation))
    if failed:
        raise Failure(
            description=f"{len(failed)} of {len(keys)} partitions failed: "
            + "; ".join(f"{key}: {failed[key]['error']}" for key in keys if key in failed),
            metadata={FAILED_PARTITIONS: MetadataValue.json({key: failed[key] for key in keys if key in failed})},
            allow_retries=False,
        )


def _evaluation(context: AssetExecutionContext, asset_key: AssetKey, key: str, result: AssetCheckResult) -> AssetCheckEvaluation:
    """The check result of one partition, recorded against the materialization just written for it
    (Dagster only derives the partition and the target itself when a run holds a single partition)."""
    records = context.instance.fetch_materializations(
        AssetRecordsFilter(asset_key=asset_key, asset_partitions=[key]), limit=1
    ).records
    target = materialization_target(records[0]) if records else None
    return AssetCheckEvaluation(
        asset_key=asset_key,
        check_name=result.check_name,
        passed=result.passed,
        metadata=result.metadata,
        severity=result.severity,
        description=result.description,
        partition=key,
        blocking=next(spec.blocking for spec in context.assets_def.check_specs if spec.name == result.check_name),
        target_materialization_data=target,
    )


def _blocked(evaluation: AssetCheckEvaluation) -> None:
    """A blocking check that failed fails its partition, as Dagster fails the run of a blocking check.
    Invalid input: a blocking check guards what the partition was given (the set's labels)."""
    raise InvalidInputError(
        f"blocking check {evaluation.check_name} failed: {evaluation.description}", key=f"partition {evaluation.partition}"
    )


def _class_names(error: BaseException | None) -> list[str]:
    """As Dagster's serialized errors name them, so `run_outcomes` classifies both alike."""
    names = []
    while error is not None:
        names.append(type(error).__name__)
        error = error.__cause__ or error.__context__
    return names
