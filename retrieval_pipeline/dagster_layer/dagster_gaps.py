"""The few things the Dagster layer needs that Dagster 1.13 offers only from its private modules (`dagster._...`).

Why a module of its own: Dagster's internals change between minor versions without deprecation, so
every use of them sits here, one tiny function each, and an upgrade of the pinned Dagster touches this
file alone. Each function names the public API that is missing; once Dagster publishes one, the
function goes and its callers use the public API. The imports stay inside the functions, as Dagster is
imported only when a command needs it.
"""

from __future__ import annotations


def partition_range_tags(first: str, last: str) -> dict[str, str]:
    """The tags that make one run of a job cover the partitions `first` to `last`.

    Gap: `JobDefinition.execute_in_process` takes one `partition_key` and no range, and the tags a
    single-run backfill sets for a range are not exported (only `dagster._core.storage.tags` holds them).
    """
    from dagster._core.storage.tags import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG

    return {ASSET_PARTITION_RANGE_START_TAG: first, ASSET_PARTITION_RANGE_END_TAG: last}


def materialization_target(record):
    """What a check evaluation recorded by hand points at: the materialization of `record` (an `EventLogRecord`).

    Gap: `AssetCheckEvaluation` is public and takes `target_materialization_data`, but the type of that
    value, `AssetCheckEvaluationTargetMaterializationData`, is not exported.
    """
    from dagster._core.definitions.asset_checks.asset_check_evaluation import AssetCheckEvaluationTargetMaterializationData

    return AssetCheckEvaluationTargetMaterializationData(
        run_id=record.event_log_entry.run_id, storage_id=record.storage_id, timestamp=record.timestamp
    )


def run_of_failed_latest_check(instance, check_key, partition: str) -> str | None:
    """The run in which the latest execution of the check on `partition` failed; None if it did not fail or never ran.

    Gap: `DagsterInstance.get_latest_asset_check_evaluation_record` takes no partition; the partition
    filter (`PartitionKeyFilter`) and the execution status (`AssetCheckExecutionRecordStatus`) that the
    event log storage takes and returns are not exported.
    """
    from dagster._core.event_api import PartitionKeyFilter
    from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus

    latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(
        [check_key], partition_filter=PartitionKeyFilter(key=partition)
    ).get(check_key)
    return latest.run_id if latest is not None and latest.status == AssetCheckExecutionRecordStatus.FAILED else None
