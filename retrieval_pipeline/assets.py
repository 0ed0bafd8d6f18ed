"""The assets: thin wrappers that call the core and turn its results into metadata a person can read.

    golden_question_set   [set]              the set, validated, written as Parquet under the store
    retriever_config      [retriever]        the retriever, validated and built (BM25 index included)
    retrieval_evaluation  [set x retriever]  evaluate_and_record(); value = the stored per-question Parquet
      + check no_regression                  evaluated in the same step from the core's regression report
    leaderboard                              latest complete rates of every pair, side by side

The evaluation depends on its own set partition and its own retriever partition only (one-dimension
partition mappings). Those are lineage dependencies: the evaluation step reads the set and builds the
retriever from the same configuration (a built retriever is not a value that can be handed over through
storage), so it never waits on, nor reads, another step's output.

No IO manager is involved: each asset's value is a file the project writes anyway. The evaluation's
value is the per-question Parquet the core's store wrote (`questions/<set>/<retriever>/<grader>/
<run_id>.parquet`), recorded as the `result_uri` metadata; writing it a second time through an IO
manager would create a copy nobody reads.
"""


import time
import warnings
from collections.abc import Mapping
from typing import Any

from dagster import (
    AssetDep,
    AssetExecutionContext,
    AssetsDefinition,
    AutomationCondition,
    BetaWarning,
    MaterializeResult,
    MetadataValue,
    MultiToSingleDimensionPartitionMapping,
    TableColumn,
    TableRecord,
    TableSchema,
    asset,
)

from retrieval_pipeline.checks import regression_check_result, regression_check_spec
from retrieval_pipeline.core.evaluation import Evaluation, evaluate_and_record
from retrieval_pipeline.core.leaderboard import build_leaderboard
from retrieval_pipeline.core.results import GroupRates, QuestionResult
from retrieval_pipeline.core.retriever import BatchRetriever, VersionedIndex
from retrieval_pipeline.core.redaction import fingerprint, redacted
from retrieval_pipeline.core.store import ResultStore
from retrieval_pipeline.partitions import RETRIEVER_DIMENSION, SET_DIMENSION, ProjectPartitions
from retrieval_pipeline.resources import RetrievalProject

GROUP = "retrieval_quality"
PREVIEW_ROWS = 20

COUNT_SCHEMA = TableSchema(columns=[TableColumn("key", "string"), TableColumn("questions", "int")])
RATES_SCHEMA = TableSchema(
    columns=[
        TableColumn("key", "string"),
        TableColumn("questions", "int"),
        TableColumn("top1_pct", "float", description="Top-1 hit rate, percent"),
        TableColumn("top3_pct", "float", description="Top-3 hit rate, percent"),
    ]
)
PREVIEW_SCHEMA = TableSchema(
    columns=[
        TableColumn("question_id", "string"),
        TableColumn("form", "string"),
        TableColumn("hard_class", "string"),
        TableColumn("top1_hit", "bool"),
        TableColumn("top3_hit", "bool"),
        TableColumn("expected", "string", description="Expected document ids (any one is a hit)"),
        TableColumn("retrieved", "string", description="Distinct document ids retrieved, best first"),
        TableColumn("latency_ms", "float"),
        TableColumn("error", "string"),
    ]
)
LEADERBOARD_SCHEMA = TableSchema(
    columns=[
        TableColumn("set", "string"),
        TableColumn("rank", "int"),
        TableColumn("retriever", "string"),
        TableColumn("top1_pct", "float"),
        TableColumn("top3_pct", "float"),
        TableColumn("questions", "int"),
        TableColumn("p95_latency_ms", "float"),
        TableColumn("run_id", "string"),
        TableColumn("latest_run_complete", "bool"),
    ]
)


def build_assets(partitions: ProjectPartitions) -> list[AssetsDefinition]:
    @asset(
        partitions_def=partitions.sets,
        group_name=GROUP,
        kinds={"parquet"},
        description="A golden question set from the configuration, validated; its questions as Parquet.",
    )
    def golden_question_set(context: AssetExecutionContext, project: RetrievalProject) -> MaterializeResult:
        question_set = project.config.question_set(context.partition_key)
        uri = project.store().save_question_set(question_set)
        return MaterializeResult(metadata=question_set_metadata(question_set, project, uri))

    @asset(
        partitions_def=partitions.retrievers,
        group_name=GROUP,
        description="A named retriever from the configuration, validated and built (any local index, such "
        "as BM25, is built here once and cached). Secrets never appear in its metadata.",
    )
    def retriever_config(context: AssetExecutionContext, project: RetrievalProject) -> MaterializeResult:
        identifier = context.partition_key
        spec = project.config.retriever_specs[identifier]
        started = time.perf_counter()
        retriever = project.config.retriever(identifier)
        build_seconds = time.perf_counter() - started
        configuration = redacted(spec.params)
        return MaterializeResult(
            metadata={
                "kind": MetadataValue.text(spec.kind),
                "configuration": MetadataValue.json(configuration),
                "configuration_fingerprint": MetadataValue.text(fingerprint(spec.kind, configuration)),
                "index_version": MetadataValue.text(
                    retriever.index_version() if isinstance(retriever, VersionedIndex) else "not reported"
                ),
                "batch_retrieval": MetadataValue.bool(isinstance(retriever, BatchRetriever)),
                "build_seconds": MetadataValue.float(round(build_seconds, 3)),
            }
        )

    @asset(
        partitions_def=partitions.evaluations,
        group_name=GROUP,
        kinds={"parquet"},
        deps=[
            AssetDep(golden_question_set, partition_mapping=_one_dimension(SET_DIMENSION)),
            AssetDep(retriever_config, partition_mapping=_one_dimension(RETRIEVER_DIMENSION)),
        ],
        check_specs=[regression_check_spec(partitions.evaluations)],
        description="One set against one retriever: top-k document hit rates, breakdowns and latency; the "
        "run is saved in the result store (per-question Parquet) and checked against the previous run.",
    )
    def retrieval_evaluation(context: AssetExecutionContext, project: RetrievalProject) -> MaterializeResult:
        set_identifier, retriever_identifier = partitions.dimensions(context.partition_key)
        config = project.config
        store = project.store()
        evaluation = evaluate_and_record(
            config.question_set(set_identifier),
            config.retriever(retriever_identifier),
            store,
            tolerances=config.tolerances,
            cutoffs=config.cutoffs,
        )
        context.log.info(evaluation.report.summary)
        return MaterializeResult(
            metadata=evaluation_metadata(evaluation, store),
            check_results=[regression_check_result(evaluation, config.tolerances, config.dagster.check_severity)],
        )

    @asset(
        deps=[retrieval_evaluation],
        group_name=GROUP,
        automation_condition=AutomationCondition.eager(),
        description="The latest complete rates of every set and retriever of the configuration, side by side.",
    )
    def leaderboard(project: RetrievalProject) -> MaterializeResult:
        config = project.config
        board = build_leaderboard(project.store(), list(partitions.set_identifiers), list(partitions.retriever_identifiers))
        metadata: dict[str, Any] = {
            "leaderboard": MetadataValue.table(
                records=[
                    TableRecord(
                        {
                            "set": entry.set_identifier,
                            "rank": rank,
                            "retriever": entry.retriever_identifier,
                            "top1_pct": _pct(entry.top1_hit_rate),
                            "top3_pct": _pct(entry.top3_hit_rate),
                            "questions": entry.question_count,
                            "p95_latency_ms": None if entry.latency_p95_ms is None else round(entry.latency_p95_ms, 2),
                            "run_id": entry.run_id,
                            "latest_run_complete": entry.latest_run_complete,
                        }
                    )
                    for set_identifier in board.set_identifiers
                    for rank, entry in enumerate(board.for_set(set_identifier), start=1)
                ],
                schema=LEADERBOARD_SCHEMA,
            ),
            "summary": MetadataValue.md(board.to_markdown()),
            "pairs_evaluated": MetadataValue.int(len(board.entries)),
            "pairs_not_evaluated": MetadataValue.int(len(board.missing)),
            "store": _uri_value(project.resolved_store_uri),
            "configuration": MetadataValue.path(str(config.path)),
        }
        for entry in board.entries:  # one numeric series per pair, so the UI plots them over time
            pair = f"{entry.set_identifier}/{entry.retriever_identifier}"
            metadata[f"top1_hit_rate/{pair}"] = MetadataValue.float(entry.top1_hit_rate)
            metadata[f"top3_hit_rate/{pair}"] = MetadataValue.float(entry.top3_hit_rate)
        return MaterializeResult(metadata=metadata)

    return [golden_question_set, retriever_config, retrieval_evaluation, leaderboard]


def _one_dimension(dimension: str) -> MultiToSingleDimensionPartitionMapping:
    """Explicit rather than inferred, so it stays right even if set and retriever keys ever coincide.
    The mapping class is marked beta in Dagster 1.13; its warning would repeat at every load."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BetaWarning)
        return MultiToSingleDimensionPartitionMapping(partition_dimension_name=dimension)


def question_set_metadata(question_set, project: RetrievalProject, uri: str) -> dict[str, Any]:
    questions = question_set.questions
    return {
        "name": MetadataValue.text(question_set.name),
        "description": MetadataValue.md(question_set.description or "(none)"),
        "source": MetadataValue.text(project.config.question_sets.source_of(question_set.identifier)),
        "question_count": MetadataValue.int(len(questions)),
        "dagster/row_count": MetadataValue.int(len(questions)),
        "no_answer_questions": MetadataValue.int(sum(1 for q in questions if not q.expected_document_ids)),
        "by_form": _count_table(question_set.counts_by_form()),
        "by_hard_class": _count_table(question_set.counts_by_hard_class()),
        "questions_uri": _uri_value(uri),
    }


def evaluation_metadata(evaluation: Evaluation, store: ResultStore) -> dict[str, Any]:
    run, report = evaluation.run, evaluation.report
    metadata: dict[str, Any] = {
        "top1_hit_rate": MetadataValue.float(run.top1_hit_rate),
        "top3_hit_rate": MetadataValue.float(run.top3_hit_rate),
        **{f"top{k}_hit_rate": MetadataValue.float(run.hit_rate(k)) for k in run.cutoffs if k not in (1, 3)},
        "question_count": MetadataValue.int(run.question_count),
        "dagster/row_count": MetadataValue.int(run.question_count),
        "top1_hits": MetadataValue.int(run.top1_hit_count),
        "top3_hits": MetadataValue.int(run.top3_hit_count),
        "errored_questions": MetadataValue.int(len(run.errored_question_ids)),
        "complete": MetadataValue.bool(run.complete),
        "verdict": MetadataValue.text(report.summary),
        "is_regression": MetadataValue.bool(report.is_regression),
        "by_form": _rates_table(run.by_form()),
        "by_hard_class": _rates_table(run.by_hard_class()),
        "questions_preview": _preview_table(run.questions),
        "result_uri": _uri_value(store.questions_uri(evaluation.stored)),
        "summary_uri": _uri_value(store.summary_uri(evaluation.stored)),
        "run_id": MetadataValue.text(run.run_id),
        "baseline_run_id": MetadataValue.text(report.baseline_run_id or "none"),
        "index_version": MetadataValue.text(run.index_version or "not reported"),
    }
    for name, value in run.latency_percentiles().items():
        metadata[f"latency_{name}_ms"] = MetadataValue.float(round(value, 3))
    return metadata


def _pct(rate: float) -> float:
    return round(rate * 100, 2)


def _uri_value(uri: str) -> MetadataValue:
    return MetadataValue.url(uri) if "://" in uri else MetadataValue.path(uri)


def _count_table(counts: Mapping[str, int]) -> MetadataValue:
    return MetadataValue.table(
        records=[TableRecord({"key": key, "questions": count}) for key, count in counts.items()], schema=COUNT_SCHEMA
    )


def _rates_table(groups: Mapping[str, GroupRates]) -> MetadataValue:
    return MetadataValue.table(
        records=[
            TableRecord(
                {"key": key, "questions": rates.questions, "top1_pct": _pct(rates.top1_hit_rate), "top3_pct": _pct(rates.top3_hit_rate)}
            )
            for key, rates in groups.items()
        ],
        schema=RATES_SCHEMA,
    )


def _preview_table(questions: tuple[QuestionResult, ...]) -> MetadataValue:
    """The first rows a reviewer wants: errors, then top-3 misses, then top-1 misses, then hits."""

    def order(indexed: tuple[int, QuestionResult]) -> tuple[int, int]:
        index, q = indexed
        rank = 0 if q.error is not None else 1 if not q.top3_hit else 2 if not q.top1_hit else 3
        return rank, index

    shown = [q for _, q in sorted(enumerate(questions), key=order)[:PREVIEW_ROWS]]
    return MetadataValue.table(
        records=[
            TableRecord(
                {
                    "question_id": q.question_id,
                    "form": q.form,
                    "hard_class": q.hard_class,
                    "top1_hit": q.top1_hit,
                    "top3_hit": q.top3_hit,
                    "expected": _ids(q.expected_document_ids) or "(none: nothing answers it)",
                    "retrieved": _ids(q.retrieved_document_ids),
                    "latency_ms": round(q.latency_ms, 3),
                    "error": q.error,
                }
            )
            for q in shown
        ],
        schema=PREVIEW_SCHEMA,
    )


def _ids(ids: tuple[str, ...], limit: int = 8) -> str:
    text = ", ".join(ids[:limit])
    return text + (f", ... (+{len(ids) - limit})" if len(ids) > limit else "")
