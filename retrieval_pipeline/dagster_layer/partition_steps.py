"""One step, one partition or a whole range of them: how the per-partition assets record their partitions.

Why: every Dagster run costs the instance a fixed amount of bookkeeping (the run record, its event
database, every event committed), whatever it evaluates; one run per partition made
`retrieval-eval nightly` spend far more on bookkeeping than on evaluation. So `nightly` runs each stage as one run over the range of its
partitions (Dagster's single-run backfill policy and range tags), while the schedule, the sensor and
the UI's Materialize run one partition each, so a team's workers still share them: the same body
serves both.

Dagster records a materialization for every partition of a range when the step succeeds and none when
it fails; it cannot fail one partition of a step (dagster-io/dagster#17836). The bodies therefore
record each partition themselves, as it finishes: its materialization, then its check evaluation,
against that materialization. A partition that fails records nothing (one whose blocking check fails
records both, then counts as failed, as Dagster fails the run of a failed blocking check), the others
go on, and the step fails at the end naming each failed partition and its error in the failure's
`failed_partitions` metadata. So the partitions that succeeded stay materialized, those that failed
show as failed, and `run_outcomes` reads a failure alike whether the run held one partition or a
range. A run of one partition lets its error through unchanged, traceback included.

An interrupted step (Ctrl-C) ends where it is: a partition is recorded as soon as it is computed, and
one whose run the store holds but Dagster does not is marked incomplete by `retrieval-eval nightly`
(interruption.py).
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
