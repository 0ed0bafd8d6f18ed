"""The assets: thin wrappers that call the core; `metadata.py` turns its results into what a person reads.

    golden_question_set   [set]              the set, validated, written as Parquet under the store
      + check labels_exist                   blocking; evaluated in the same step (audit.py)
    retriever_config      [retriever]        the retriever, validated and built (BM25 index included)
    retrieval_evaluation  [set x retriever]  evaluate_and_record(); value = the stored per-question Parquet
      + check no_regression                  evaluated in the same step from the core's regression report
                                             (run tag retrieval_eval/baseline_run_id pins the baseline)
    leaderboard                              latest complete rates of every pair, side by side
      + check every_pair_passes              every pair's latest stored verdict passed (leaderboard_check.py)

The partitions come from the configuration, so each partitioned asset has a builder taking them; the
leaderboard is unpartitioned and defined once, here. The evaluation depends on its own set partition and
its own retriever partition only (one-dimension partition mappings). Those are lineage dependencies:
the evaluation step reads the set and builds the retriever from the same configuration (a built
retriever is not a value that can be handed over through storage), so it never reads another step's output.

The partitioned assets run one partition per run (the schedule, the sensor, the UI) or a whole range
in one run (`retrieval-eval nightly`, Dagster's single-run backfill policy): each partition records its
own materialization and check evaluation as it finishes (partition_steps.py). That is why the set and
the evaluation are `multi_asset(can_subset=True)` rather than `@asset(check_specs=...)`: a check spec of
an asset that cannot be subset is a required output, and hand-recorded `AssetCheckEvaluation` events do
not fill it (Dagster 1.13: "DagsterStepOutputNotFoundError: Core compute for op ... did not return an
output for non-optional output ..."; `output_required=False` makes only the asset's own output
optional). Subsettable, each check can also run alone (the UI's "Execute"): `labels_exist` is read
from the configuration again, `no_regression` from the partition's latest stored run (the core's
`latest_evaluation`, its verdict as recorded); neither materializes nor stores anything.

Every body runs inside `scrubbed_errors()`: Dagster stores a failing step's message and traceback in
its event log, so an error quoting a secret is replaced by one with the secret masked before it leaves.

Each asset's value is a file the project writes anyway (the evaluation's: the per-question Parquet of
its run, the `result_uri` metadata), so the bodies return none and the IO manager only reads (io_manager.py).
"""

import functools
import time
import warnings
from collections.abc import Callable
from dataclasses import replace

from dagster import (
    AssetDep,
    AssetExecutionContext,
    AssetKey,
    AssetsDefinition,
    AssetSpec,
    BackfillPolicy,
    BetaWarning,
    Failure,
    MaterializeResult,
    asset,
    multi_asset,
)

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.secrets import scrubbed_errors
from retrieval_pipeline.core.services.evaluation import evaluate_and_record, latest_evaluation
from retrieval_pipeline.core.services.settings import EvaluationSettings
from retrieval_pipeline.core.services.traffic_weights import set_traffic
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.dagster_layer.audit import SET_ASSET, labels_check_result, labels_check_spec, refuse_unfixed_labels
from retrieval_pipeline.dagster_layer.checks import EVALUATION_ASSET, regression_check_result, regression_check_spec
from retrieval_pipeline.dagster_layer.io_manager import LEADERBOARD, RESULT_STORE_IO_MANAGER
from retrieval_pipeline.dagster_layer.leaderboard_check import LEADERBOARD_CHECK, leaderboard_check_result, leaderboard_check_spec
from retrieval_pipeline.dagster_layer.metadata import (
    evaluation_metadata,
    leaderboard_metadata,
    question_set_metadata,
    retriever_metadata,
)
from retrieval_pipeline.dagster_layer.partition_steps import PartitionDone, materialize_each
from retrieval_pipeline.dagster_layer.partitions import RETRIEVER_DIMENSION, SET_DIMENSION, ProjectPartitions, one_dimension
from retrieval_pipeline.dagster_layer.resources import RetrievalProject

GROUP = "retrieval_quality"
RETRIEVER_ASSET = "retriever_config"
BASELINE_TAG = "retrieval_eval/baseline_run_id"
"""A run tag pinning the baseline (the CLI's `--baseline RUN_ID`): launch the evaluation job with it."""


def build_assets(partitions: ProjectPartitions) -> list[AssetsDefinition]:
    """The partitioned assets, then the leaderboard."""
    with warnings.catch_warnings():
        # `backfill_policy` (ranges in one run, partition_steps.py) is marked beta in Dagster 1.13; its
        # warning would repeat at every load.
        warnings.simplefilter("ignore", BetaWarning)
        return [question_set_asset(partitions), retriever_asset(partitions), evaluation_asset(partitions), leaderboard]


def question_set_asset(partitions: ProjectPartitions) -> AssetsDefinition:
    @multi_asset(
        name=SET_ASSET,
        specs=[
            AssetSpec(
                SET_ASSET,
                group_name=GROUP,
                kinds={"parquet"},
                skippable=True,
                description="A golden question set from the configuration, validated; its questions as Parquet.",
            ).with_io_manager_key(RESULT_STORE_IO_MANAGER)
        ],
        partitions_def=partitions.sets,
        check_specs=[labels_check_spec(partitions.sets)],
        can_subset=True,  # see the module docstring
        backfill_policy=BackfillPolicy.single_run(),
    )
    def golden_question_set(context: AssetExecutionContext, project: RetrievalProject):
        if AssetKey(SET_ASSET) not in context.selected_asset_keys:  # the check alone (the UI's "Execute")
            yield from materialize_each(context, SET_ASSET, functools.partial(checked_labels, project))
            return
        yield from materialize_each(context, SET_ASSET, functools.partial(saved_set, project, project.store(context.log)))

    return golden_question_set


def retriever_asset(partitions: ProjectPartitions) -> AssetsDefinition:
    @asset(
        name=RETRIEVER_ASSET,
        partitions_def=partitions.retrievers,
        group_name=GROUP,
        output_required=False,
        backfill_policy=BackfillPolicy.single_run(),
        description="A named retriever from the configuration, validated and built (any local index, such "
        "as BM25, is built here once and cached). Secrets never appear in its metadata.",
    )
    def retriever_config(context: AssetExecutionContext, project: RetrievalProject):
        yield from materialize_each(context, RETRIEVER_ASSET, functools.partial(built_retriever, project, context.log.info))

    return retriever_config


def evaluation_asset(partitions: ProjectPartitions) -> AssetsDefinition:
    @multi_asset(
        name=EVALUATION_ASSET,
        specs=[
            AssetSpec(
                EVALUATION_ASSET,
                group_name=GROUP,
                kinds={"parquet"},
                skippable=True,
                deps=[
                    AssetDep(AssetKey(SET_ASSET), partition_mapping=one_dimension(SET_DIMENSION)),
                    AssetDep(AssetKey(RETRIEVER_ASSET), partition_mapping=one_dimension(RETRIEVER_DIMENSION)),
                ],
                description="One set against one retriever: top-k document hit rates, breakdowns and latency; "
                "the run is saved in the result store (per-question Parquet) and checked against the previous run.",
            ).with_io_manager_key(RESULT_STORE_IO_MANAGER)
        ],
        partitions_def=partitions.evaluations,
        check_specs=[regression_check_spec(partitions.evaluations)],
        can_subset=True,  # see the module docstring
        backfill_policy=BackfillPolicy.single_run(),
    )
    def retrieval_evaluation(context: AssetExecutionContext, project: RetrievalProject):
        if AssetKey(EVALUATION_ASSET) not in context.selected_asset_keys:  # the check alone (the UI's "Execute")
            yield from materialize_each(context, EVALUATION_ASSET, stored_check(context, project, partitions))
            return
        yield from materialize_each(context, EVALUATION_ASSET, evaluator(context, project, partitions))

    return retrieval_evaluation


@asset(
    name=LEADERBOARD,
    deps=[AssetKey(EVALUATION_ASSET)],
    group_name=GROUP,
    io_manager_key=RESULT_STORE_IO_MANAGER,
    check_specs=[leaderboard_check_spec()],
    description="The latest complete rates of every set and retriever of the configuration, side by side; "
    f"its {LEADERBOARD_CHECK} check fails when any pair's latest run regressed or is incomplete.",
)
def leaderboard(context: AssetExecutionContext, project: RetrievalProject) -> MaterializeResult:
    with scrubbed_errors():
        return MaterializeResult(
            metadata=leaderboard_metadata(project.leaderboard(context.log), project),
            check_results=[leaderboard_check_result(project.latest_verdicts(context.log), project.config.dagster.check_severity)],
        )


def saved_set(project: RetrievalProject, store: ResultStore, identifier: str) -> PartitionDone:
    question_set = project.config.question_set(identifier)
    uri = store.save_question_set(question_set)
    return PartitionDone(question_set_metadata(question_set, project, uri), labels_check_result(project, identifier))


def checked_labels(project: RetrievalProject, identifier: str) -> PartitionDone:
    return PartitionDone({}, labels_check_result(project, identifier))


def built_retriever(project: RetrievalProject, progress: Callable[[str], None], identifier: str) -> PartitionDone:
    started = time.perf_counter()
    retriever = project.config.retriever(identifier, progress=progress)
    spec = project.config.retriever_specs[identifier]
    return PartitionDone(retriever_metadata(spec, retriever, time.perf_counter() - started))


def evaluator(
    context: AssetExecutionContext, project: RetrievalProject, partitions: ProjectPartitions
) -> Callable[[str], PartitionDone]:
    """Range keys come retriever by retriever (Dagster orders the dimensions by name): each is built
    once; each set's label check is read once (a failed one is read, and refused, every time)."""
    config, store = project.config, project.store(context.log)
    settings = EvaluationSettings.from_config(config, baseline_run_id=pinned_baseline(context), labels=project.labels)
    retriever = functools.lru_cache(maxsize=1)(config.retriever)
    labels_fixed = functools.cache(functools.partial(refuse_unfixed_labels, context))
    traffic = functools.cache(lambda identifier: set_traffic(config, config.question_set(identifier), project.traffic_log))

    def evaluate(key: str) -> PartitionDone:
        set_identifier, retriever_identifier = partitions.dimensions(key)
        labels_fixed(set_identifier)
        weighed = replace(settings, traffic=traffic(set_identifier))
        evaluation = evaluate_and_record(config.question_set(set_identifier), retriever(retriever_identifier), store, weighed)
        return PartitionDone(
            evaluation_metadata(evaluation, store, settings.tolerances),
            regression_check_result(evaluation, settings.tolerances, config.dagster.check_severity),
        )

    return evaluate


def stored_check(
    context: AssetExecutionContext, project: RetrievalProject, partitions: ProjectPartitions
) -> Callable[[str], PartitionDone]:
    """The check of each partition's latest stored run, as `retrieval-eval report` reads it: its verdict
    the one recorded with the run, so running the check alone never contradicts the evaluation."""
    config, store = project.config, project.store(context.log)

    def check(key: str) -> PartitionDone:
        set_identifier, retriever_identifier = partitions.dimensions(key)
        history = HistoryKey(set_identifier, retriever_identifier)
        question_set = config.question_set(set_identifier)
        evaluation = latest_evaluation(store, history, config.tolerances, question_set, choice=project.labels or config.labels)
        if evaluation is None:
            raise Failure(
                description=f"{set_identifier} × {retriever_identifier} has no stored run to check: "
                f"materialize {EVALUATION_ASSET} to evaluate it",
                allow_retries=False,
            )
        return PartitionDone({}, regression_check_result(evaluation, config.tolerances, config.dagster.check_severity))

    return check


def pinned_baseline(context: AssetExecutionContext) -> str | None:
    """A pinned baseline is one run of one pair: refused on a run over a range of partitions."""
    pinned = context.run.tags.get(BASELINE_TAG)
    if pinned is not None and len(context.partition_keys) > 1:
        raise InvalidInputError(
            f"a pinned baseline ({pinned}) applies to one partition; this run holds {len(context.partition_keys)}",
            source=f"run tag {BASELINE_TAG}",
        )
    return pinned
