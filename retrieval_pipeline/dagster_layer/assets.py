"""The assets (sets, retrievers, evaluations, the leaderboard): thin wrappers that call the core; the
`metadata/` builders lay out what a person reads from its views; docs/dagster.md lists them.

A partition whose check fails with severity ERROR raises `CheckFailed` instead of materializing, because
Dagster counts a partition as failed only when a failed run planned it and did not materialize it; the
stored run is kept all the same. The evaluation depends on its own set and retriever partitions for
lineage only: a built retriever is not a value storage can hand over. Every body runs inside
`scrubbed_errors()`, so a failing step's message reaches the event log with secrets masked.
"""

import logging
import time

from dagster import (
    AssetCheckSeverity,
    AssetDep,
    AssetExecutionContext,
    AssetKey,
    AssetPartitionStatus,
    AssetsDefinition,
    Failure,
    MaterializeResult,
    asset,
)

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.secrets import scrubbed_errors
from retrieval_pipeline.core.services.evaluation.configured import evaluate_configured
from retrieval_pipeline.core.services.evaluation.record import incomplete_unless_recorded
from retrieval_pipeline.core.storage.store import HistoryKey
from retrieval_pipeline.dagster_layer.checks import regression_check_result, regression_check_spec
from retrieval_pipeline.dagster_layer.labels.audit import labels_check_result, labels_check_spec
from retrieval_pipeline.dagster_layer.leaderboard_check import LEADERBOARD_CHECK, leaderboard_check_result, leaderboard_check_spec
from retrieval_pipeline.dagster_layer.metadata.charted import evaluation_metadata, leaderboard_metadata
from retrieval_pipeline.dagster_layer.metadata.project import question_set_metadata, retriever_metadata
from retrieval_pipeline.dagster_layer.metadata.values import typed
from retrieval_pipeline.dagster_layer.names import (
    EVALUATION_ASSET,
    GROUP,
    LEADERBOARD_ASSET,
    RETRIEVER_ASSET,
    SET_ASSET,
    Names,
)
from retrieval_pipeline.dagster_layer.partitions import RETRIEVER_DIMENSION, SET_DIMENSION, ProjectPartitions, one_dimension
from retrieval_pipeline.dagster_layer.sensors import after_upstream

BASELINE_TAG = "retrieval_eval/baseline_run_id"
"""A run tag pinning the baseline (the CLI's `--baseline RUN_ID`): launch the evaluation job with it."""
PROGRESS = logging.getLogger("retrieval_pipeline.progress")
"""Where a long build's progress also goes, beside the run's event log: `nightly` prints it on stderr."""


class CheckFailed(Failure):
    """A partition whose check failed with severity ERROR: the run fails and the partition is not materialized."""


def build_assets(partitions: ProjectPartitions, names: Names) -> list[AssetsDefinition]:
    return [
        question_set_asset(partitions, names),
        retriever_asset(partitions, names),
        evaluation_asset(partitions, names),
        leaderboard_asset(names),
    ]


def progress_of(context: AssetExecutionContext):
    """A build's progress lines, named by the partition they belong to (`embedded: encoded 2/4 documents`)."""

    def progress(message: str) -> None:
        context.log.info(message)
        PROGRESS.info(f"{context.partition_key}: {message}")

    return progress


def question_set_asset(partitions: ProjectPartitions, names: Names) -> AssetsDefinition:
    @asset(
        key=names.key(SET_ASSET),
        partitions_def=partitions.sets,
        group_name=names.name(GROUP),
        kinds={"parquet"},
        io_manager_key=names.io_manager,
        required_resource_keys={names.resource},
        check_specs=[labels_check_spec(partitions.sets, names)],
        description="A golden question set from the configuration, validated; its questions as Parquet.",
    )
    def golden_question_set(context: AssetExecutionContext):
        project = names.project(context)
        with scrubbed_errors():
            check = labels_check_result(project, context.partition_key)
            if not check.passed:
                yield check
                raise CheckFailed(description=check.description, allow_retries=False)
            question_set = project.config.question_set(context.partition_key)
            uri = project.store(context.log).save_question_set(question_set)
        yield MaterializeResult(metadata=typed(question_set_metadata(question_set, project.config, uri)))
        yield check

    return golden_question_set


def retriever_asset(partitions: ProjectPartitions, names: Names) -> AssetsDefinition:
    @asset(
        key=names.key(RETRIEVER_ASSET),
        partitions_def=partitions.retrievers,
        group_name=names.name(GROUP),
        required_resource_keys={names.resource},
        description="A named retriever from the configuration, validated and built (any local index, such "
        "as BM25, is built here once and cached). Secrets never appear in its metadata.",
    )
    def retriever_config(context: AssetExecutionContext) -> MaterializeResult:
        project = names.project(context)
        with scrubbed_errors():
            started, identifier = time.perf_counter(), context.partition_key
            retriever = project.config.retriever(identifier, progress=progress_of(context))
            spec = project.config.retriever_specs[identifier]
            return MaterializeResult(metadata=typed(retriever_metadata(spec, retriever, time.perf_counter() - started)))

    return retriever_config


def evaluation_asset(partitions: ProjectPartitions, names: Names) -> AssetsDefinition:
    @asset(
        key=names.key(EVALUATION_ASSET),
        partitions_def=partitions.evaluations,
        group_name=names.name(GROUP),
        kinds={"parquet"},
        io_manager_key=names.io_manager,
        required_resource_keys={names.resource},
        deps=[
            AssetDep(names.key(SET_ASSET), partition_mapping=one_dimension(SET_DIMENSION)),
            AssetDep(names.key(RETRIEVER_ASSET), partition_mapping=one_dimension(RETRIEVER_DIMENSION)),
        ],
        check_specs=[regression_check_spec(names.key(EVALUATION_ASSET), partitions.evaluations)],
        description="One set against one retriever: top-k document hit rates, breakdowns and latency; "
        "the run is saved in the result store (per-question Parquet) and checked against the previous run. "
        "A regressed or incomplete run fails its partition; its figures are on the failed run.",
    )
    def retrieval_evaluation(context: AssetExecutionContext):
        project = names.project(context)
        set_identifier, retriever_identifier = partitions.dimensions(context.partition_key)
        store = project.store(context.log)
        with scrubbed_errors():
            refuse_failed_set(context, partitions, names.key(SET_ASSET), set_identifier)
            with incomplete_unless_recorded(store, HistoryKey(set_identifier, retriever_identifier)):
                evaluation, settings = evaluate_configured(
                    project.config,
                    set_identifier,
                    retriever_identifier,
                    store,
                    baseline_run_id=context.run.tags.get(BASELINE_TAG),
                    labels=project.labels,
                    traffic_log=project.traffic_log,
                    build_progress=progress_of(context),
                )
                metadata = evaluation_metadata(evaluation, store, settings.tolerances)
                check = regression_check_result(evaluation, settings.tolerances, project.config.dagster.check_severity)
                failed = not check.passed and check.severity == AssetCheckSeverity.ERROR
                if not failed:  # recorded inside the block: an interrupt before Dagster records it keeps the run incomplete
                    yield MaterializeResult(metadata=metadata)
                yield check
        if failed:
            raise CheckFailed(description=check.description, metadata=metadata, allow_retries=False)

    return retrieval_evaluation


def refuse_failed_set(context: AssetExecutionContext, partitions: ProjectPartitions, sets: AssetKey, set_identifier: str) -> None:
    """A set whose latest materialization failed (its labels name documents no corpus holds) is not evaluated."""
    status = context.instance.get_status_by_partition(sets, [set_identifier], partitions.sets)
    if (status or {}).get(set_identifier) == AssetPartitionStatus.FAILED:  # None: the set never ran
        raise InvalidInputError(
            f"the latest materialization of set '{set_identifier}' failed (see its labels_exist check); fix the set "
            f"(`retrieval-eval audit {set_identifier}`) and materialize {sets.to_user_string()} again before evaluating it",
            key=f"set '{set_identifier}'",
        )


def leaderboard_asset(names: Names) -> AssetsDefinition:
    @asset(
        key=names.key(LEADERBOARD_ASSET),
        deps=[names.key(EVALUATION_ASSET)],
        group_name=names.name(GROUP),
        io_manager_key=names.io_manager,
        required_resource_keys={names.resource},
        check_specs=[leaderboard_check_spec(names.key(LEADERBOARD_ASSET))],
        automation_condition=after_upstream(),
        description="The latest complete rates of every set and retriever of the configuration, side by side; "
        f"its {LEADERBOARD_CHECK} check fails when any pair's latest run regressed or is incomplete. Refreshed "
        "by declarative automation once evaluations finish.",
    )
    def leaderboard(context: AssetExecutionContext) -> MaterializeResult:
        project = names.project(context)
        with scrubbed_errors():
            return MaterializeResult(
                metadata=leaderboard_metadata(project.leaderboard(context.log), project),
                check_results=[
                    leaderboard_check_result(project.latest_verdicts(context.log), project.config.dagster.check_severity)
                ],
            )

    return leaderboard
