"""The assets: thin wrappers that call the core; `metadata.py` turns its results into what a person reads.

    golden_question_set   [set]              the set, validated, written as Parquet under the store
    retriever_config      [retriever]        the retriever, validated and built (BM25 index included)
    retrieval_evaluation  [set x retriever]  evaluate_and_record(); value = the stored per-question Parquet
      + check no_regression                  evaluated in the same step from the core's regression report
                                             (run tag retrieval_eval/baseline_run_id pins the baseline)
    leaderboard                              latest complete rates of every pair, side by side

The evaluation depends on its own set partition and its own retriever partition only (one-dimension
partition mappings). Those are lineage dependencies: the evaluation step reads the set and builds the
retriever from the same configuration (a built retriever is not a value that can be handed over through
storage), so it never waits on, nor reads, another step's output.

Every body runs inside `scrubbed_errors()`: Dagster stores a failing step's message and traceback in
its event log, so an error quoting a secret is replaced by one with the secret masked before it leaves.

Each asset's value is a file the project writes anyway: the evaluation's is the per-question Parquet
the core's store wrote (`questions/<set>/<retriever>/<grader>/<run_id>.parquet`), recorded as the
`result_uri` metadata. The bodies return MaterializeResult, so no IO manager writes a second copy;
`io_manager.ResultStoreIOManager` only READS those files, so `load_asset_value` and downstream assets
get the values as pyarrow Tables.
"""


import time
import warnings

from dagster import (
    AssetDep,
    AssetExecutionContext,
    AssetsDefinition,
    AutomationCondition,
    BetaWarning,
    MaterializeResult,
    MultiToSingleDimensionPartitionMapping,
    asset,
)

from retrieval_pipeline.dagster_layer.audit import refuse_unfixed_labels
from retrieval_pipeline.dagster_layer.io_manager import RESULT_STORE_IO_MANAGER
from retrieval_pipeline.dagster_layer.checks import regression_check_result, regression_check_spec
from retrieval_pipeline.core.evaluation import evaluate_and_record
from retrieval_pipeline.core.secrets import scrubbed_errors
from retrieval_pipeline.dagster_layer.metadata import evaluation_metadata, leaderboard_metadata, question_set_metadata, retriever_metadata
from retrieval_pipeline.dagster_layer.partitions import RETRIEVER_DIMENSION, SET_DIMENSION, ProjectPartitions
from retrieval_pipeline.dagster_layer.resources import RetrievalProject

GROUP = "retrieval_quality"
BASELINE_TAG = "retrieval_eval/baseline_run_id"
"""A run tag pinning the baseline (the CLI's `--baseline RUN_ID`): launch the evaluation job with it."""


def build_assets(partitions: ProjectPartitions) -> list[AssetsDefinition]:
    @asset(
        partitions_def=partitions.sets,
        group_name=GROUP,
        kinds={"parquet"},
        io_manager_key=RESULT_STORE_IO_MANAGER,
        description="A golden question set from the configuration, validated; its questions as Parquet.",
    )
    def golden_question_set(context: AssetExecutionContext, project: RetrievalProject) -> MaterializeResult:
        with scrubbed_errors():
            question_set = project.config.question_set(context.partition_key)
            uri = project.store(context.log).save_question_set(question_set)
            return MaterializeResult(metadata=question_set_metadata(question_set, project, uri))

    @asset(
        partitions_def=partitions.retrievers,
        group_name=GROUP,
        description="A named retriever from the configuration, validated and built (any local index, such "
        "as BM25, is built here once and cached). Secrets never appear in its metadata.",
    )
    def retriever_config(context: AssetExecutionContext, project: RetrievalProject) -> MaterializeResult:
        identifier = context.partition_key
        with scrubbed_errors():
            spec = project.config.retriever_specs[identifier]
            started = time.perf_counter()
            retriever = project.config.retriever(identifier)
            return MaterializeResult(metadata=retriever_metadata(spec, retriever, time.perf_counter() - started))

    @asset(
        partitions_def=partitions.evaluations,
        group_name=GROUP,
        kinds={"parquet"},
        io_manager_key=RESULT_STORE_IO_MANAGER,
        deps=[
            AssetDep(golden_question_set, partition_mapping=one_dimension(SET_DIMENSION)),
            AssetDep(retriever_config, partition_mapping=one_dimension(RETRIEVER_DIMENSION)),
        ],
        check_specs=[regression_check_spec(partitions.evaluations)],
        description="One set against one retriever: top-k document hit rates, breakdowns and latency; the "
        "run is saved in the result store (per-question Parquet) and checked against the previous run.",
    )
    def retrieval_evaluation(context: AssetExecutionContext, project: RetrievalProject) -> MaterializeResult:
        set_identifier, retriever_identifier = partitions.dimensions(context.partition_key)
        with scrubbed_errors():
            refuse_unfixed_labels(context, set_identifier)
            config = project.config
            store = project.store(context.log)
            evaluation = evaluate_and_record(
                config.question_set(set_identifier),
                config.retriever(retriever_identifier),
                store,
                tolerances=config.tolerances,
                tolerances_source=config.source,
                cutoffs=config.cutoffs,
                baseline_run_id=context.run.tags.get(BASELINE_TAG),
                baseline_policy=config.baseline_policy,
                unstable_window=config.gate_unstable_window,
            )
            context.log.info(evaluation.report.summary)
            return MaterializeResult(
                metadata=evaluation_metadata(evaluation, store, config.tolerances),
                check_results=[regression_check_result(evaluation, config.tolerances, config.dagster.check_severity)],
            )

    @asset(
        deps=[retrieval_evaluation],
        group_name=GROUP,
        io_manager_key=RESULT_STORE_IO_MANAGER,
        automation_condition=AutomationCondition.eager(),
        description="The latest complete rates of every set and retriever of the configuration, side by side.",
    )
    def leaderboard(context: AssetExecutionContext, project: RetrievalProject) -> MaterializeResult:
        with scrubbed_errors():
            return MaterializeResult(metadata=leaderboard_metadata(project.leaderboard(context.log), project))

    return [golden_question_set, retriever_config, retrieval_evaluation, leaderboard]


def one_dimension(dimension: str) -> MultiToSingleDimensionPartitionMapping:
    """Explicit rather than inferred, so it stays right even if set and retriever keys ever coincide.
    The mapping class is marked beta in Dagster 1.13; its warning would repeat at every load."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BetaWarning)
        return MultiToSingleDimensionPartitionMapping(partition_dimension_name=dimension)
