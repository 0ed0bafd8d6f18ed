"""The metadata of what the evaluations are made of and add up to: a question set, a retriever (and a
dense retriever's shard of document vectors), the leaderboard."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from retrieval_pipeline.core.base.redaction import fingerprint, redacted
from retrieval_pipeline.core.golden.conversations import DEPTHS
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.retrieval.retriever import BatchRetriever, BuildReport, Retriever, VersionedIndex
from retrieval_pipeline.core.scoring.measures import TESTED, Measure
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.services.configuration.schema import RetrieverSpec
from retrieval_pipeline.core.services.evaluation.leaderboard import Leaderboard
from retrieval_pipeline.core.services.views.leaderboard_rows import depth_rows, leaderboard_rows, ranking_measures
from retrieval_pipeline.dagster_layer.metadata.values import Column, Json, Link, Markdown, Table, plotted, table

COUNT_COLUMNS = (Column("key", "string"), Column("questions", "int"))
RUN_COLUMNS = (
    Column("set", "string"),
    Column("retriever", "string"),
    Column("questions", "int"),
    Column("p95_latency_ms", "float", description="Empty when the questions were timed in batches"),
    Column("batch_mean_latency_ms", "float", description="Mean per question of batch calls (no percentiles)"),
    Column("run_id", "string"),
    Column("latest_run_complete", "bool"),
)
DEPTH_COLUMNS = (
    Column("set", "string"),
    Column("retriever", "string"),
    *[Column(f"depth_{depth}", "string", description=f"Top-1 / top-3 hit rate at turn depth {depth}") for depth in DEPTHS],
    Column("conversations_all_hit", "string", description="Conversations whose every turn hit in the top 3"),
    Column("rewrite_gap", "string", description="Top-1 / top-3 on the turns as asked minus on the set's rewrites"),
)
NO_CHART = "No complete evaluation run yet."


def question_set_metadata(question_set: GoldenQuestionSet, config: ProjectConfig, uri: str) -> dict[str, Any]:
    questions = question_set.questions
    return {
        "name": question_set.name,
        "description": Markdown(question_set.description or "(none)"),
        "source": config.question_sets.source_of(question_set.identifier),
        "question_count": len(questions),
        "dagster/row_count": len(questions),
        "no_answer_questions": sum(1 for q in questions if not q.expected_document_ids),
        "by_form": _count_table(question_set.counts_by_form()),
        "by_hard_class": _count_table(question_set.counts_by_hard_class()),
        "questions_uri": Link(uri),
    }


def retriever_metadata(spec: RetrieverSpec, retriever: Retriever, build_seconds: float) -> dict[str, Any]:
    """Secrets never show: the parameters are redacted, and fingerprinted as redacted."""
    configuration = redacted(spec.params)
    return {
        "kind": spec.kind,
        "configuration": Json(configuration),
        "configuration_fingerprint": fingerprint(spec.kind, configuration),
        "query_mode": spec.conversation.label,
        "index_version": retriever.index_version() if isinstance(retriever, VersionedIndex) else "not reported",
        "batch_retrieval": isinstance(retriever, BatchRetriever),
        "build_seconds": plotted(build_seconds, 3),
        **(_report_values(retriever.build_report()) if isinstance(retriever, BuildReport) else {}),
    }


def _report_values(report: Mapping[str, str | int | float | bool]) -> dict[str, Any]:
    """What the kind says building did: a flag, a count or a float as itself, anything else as its text."""
    return {f"build_{name}": value if type(value) in (bool, int, float) else str(value) for name, value in report.items()}


def shard_metadata(index: int, sharded, vectors, step_seconds: float) -> dict[str, Any]:
    """A shard of document vectors encoded (or found in the cache): counts, time and rate, and its cache
    key (the folder's name under the cache, never the cache's URI, which may carry credentials)."""
    seconds = vectors.encoding_seconds
    return {
        "shard": f"{index} of {sharded.count}",
        "documents": len(sharded.members[index]),
        "vectors": len(vectors.document_ids),
        "encoded": vectors.encoded,
        "reused_from_cache": 0 if vectors.encoded else len(vectors.document_ids),
        "encoding_seconds": plotted(seconds, 3),
        "documents_per_second": plotted(round(vectors.encoded / seconds, 1) if seconds > 0 else 0.0),
        "step_seconds": plotted(step_seconds, 3),
        "cache_key": sharded.keys[index],
    }


def padding_shard_metadata(identifier: str, count: int) -> dict[str, Any]:
    return {"shard": f"none: {identifier} has {count} shards", "documents": 0}


def leaderboard_metadata(
    board: Leaderboard, store_uri: str, config_path: str, chart: str | None, depth_chart: str | None = None
) -> dict[str, Any]:
    """`chart`: the latest rates drawn as Markdown (by `reports/charts.py`), None when nothing is evaluated;
    `depth_chart`: the sets of conversations' rates by turn depth, drawn too, None for a board without turns.
    The ranked table holds what a person compares, narrow enough for the Value column of the asset's
    Overview; each run's question count, latency and id are a second table (`leaderboard_runs`)."""
    ranking = ranking_measures(board)
    rows = leaderboard_rows(board, ranking)
    metadata: dict[str, Any] = {
        "leaderboard": _columns_of(rows, leaderboard_columns(ranking)),
        "leaderboard_runs": _columns_of(rows, RUN_COLUMNS),
        "summary": Markdown(board.to_markdown()),
        "leaderboard_chart": Markdown(NO_CHART if chart is None else chart),
        "pairs_evaluated": len(board.entries),
        "pairs_not_evaluated": len(board.missing),
        "store": Link(store_uri),
        "configuration": Link(config_path),
    }
    by_depth = depth_rows(board)
    if by_depth:  # a board without conversations keeps the entries it always had
        metadata["leaderboard_by_turn_depth"] = table(DEPTH_COLUMNS, by_depth)
    if depth_chart:
        metadata["leaderboard_by_turn_depth_chart"] = Markdown(depth_chart)
    for entry in board.entries:  # one numeric series per pair, so the UI plots them over time
        pair = f"{entry.set_identifier}/{entry.retriever_identifier}"
        for figure in TESTED:
            metadata[f"{figure.column}/{pair}"] = plotted(entry.summary.figures[figure.key], 4)
    return metadata


def leaderboard_columns(ranking: list[Measure]) -> tuple[Column, ...]:
    """The rates a person compares as text, then each ranking measure as text too, under its own name (the
    depth may differ between sets)."""
    return (
        Column("set", "string"),
        Column("rank", "int"),
        Column("retriever", "string"),
        *[Column(figure.key, "string", description=figure.measure.label) for figure in TESTED],
        *[Column(measure.name, "string", description=f"{measure.label} at the run's deepest cut-off") for measure in ranking],
    )


def _columns_of(rows: list[dict[str, Any]], columns: tuple[Column, ...]) -> Table:
    return table(columns, ({column.name: row[column.name] for column in columns} for row in rows))


def _count_table(counts: Mapping[str, int]) -> Table:
    return table(COUNT_COLUMNS, ({"key": key, "questions": count} for key, count in counts.items()))
