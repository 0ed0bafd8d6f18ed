"""The metadata a person reads in the Dagster UI: rates to plot, breakdown and preview tables, URIs.

Built from the core's values only; secrets never reach it (a retriever's parameters are redacted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dagster import MetadataValue, TableColumn, TableRecord, TableSchema

from retrieval_pipeline.core.evaluation import Evaluation
from retrieval_pipeline.core.leaderboard import Leaderboard
from retrieval_pipeline.core.redaction import fingerprint, redacted
from retrieval_pipeline.core.results import GroupRates, QuestionResult
from retrieval_pipeline.core.retriever import BatchRetriever, Retriever, VersionedIndex
from retrieval_pipeline.core.store import ResultStore
from retrieval_pipeline.dagster_layer.resources import RetrievalProject

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
        TableColumn("p95_latency_ms", "float", description="Empty when the questions were timed in batches"),
        TableColumn("batch_mean_latency_ms", "float", description="Mean per question of batch calls (no percentiles)"),
        TableColumn("mrr", "float", description="MRR at the run's deepest cut-off"),
        TableColumn("ndcg", "float", description="nDCG at the run's deepest cut-off"),
        TableColumn("run_id", "string"),
        TableColumn("latest_run_complete", "bool"),
    ]
)


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
        "verdict_status": MetadataValue.text(report.verdict.value),
        "is_regression": MetadataValue.bool(report.is_regression),
        "set_fingerprint": MetadataValue.text(run.set_fingerprint or "none"),
        "by_form": _rates_table(run.by_form()),
        "by_hard_class": _rates_table(run.by_hard_class()),
        "questions_preview": _preview_table(run.questions),
        "result_uri": _uri_value(store.questions_uri(evaluation.stored)),
        "summary_uri": _uri_value(store.summary_uri(evaluation.stored)),
        "run_id": MetadataValue.text(run.run_id),
        "baseline_run_id": MetadataValue.text(report.baseline_run_id or "none"),
        "index_version": MetadataValue.text(run.index_version or "not reported"),
        "latency_mode": MetadataValue.text(run.latency_mode),
        **{name: MetadataValue.float(value) for name, value in run.metrics().items()},
    }
    for name, (low, high) in run.intervals().items():
        metadata[f"{name}_ci_low"] = MetadataValue.float(low)
        metadata[f"{name}_ci_high"] = MetadataValue.float(high)
    for name, value in run.latency_summary().items():
        metadata[f"latency_{name}_ms"] = MetadataValue.float(round(value, 3))
    return metadata


def retriever_metadata(spec, retriever: Retriever, build_seconds: float) -> dict[str, Any]:
    configuration = redacted(spec.params)
    return {
        "kind": MetadataValue.text(spec.kind),
        "configuration": MetadataValue.json(configuration),
        "configuration_fingerprint": MetadataValue.text(fingerprint(spec.kind, configuration)),
        "index_version": MetadataValue.text(retriever.index_version() if isinstance(retriever, VersionedIndex) else "not reported"),
        "batch_retrieval": MetadataValue.bool(isinstance(retriever, BatchRetriever)),
        "build_seconds": MetadataValue.float(round(build_seconds, 3)),
    }


def leaderboard_metadata(board: Leaderboard, project: RetrievalProject) -> dict[str, Any]:
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
                        "p95_latency_ms": _rounded(entry.latency_p95_ms),
                        "batch_mean_latency_ms": _rounded(entry.latency_batch_mean_ms),
                        "mrr": _rounded(next((v for n, v in entry.metrics if n.startswith("mrr@")), None), 4),
                        "ndcg": _rounded(next((v for n, v in entry.metrics if n.startswith("ndcg@")), None), 4),
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
        "configuration": MetadataValue.path(str(project.config.path)),
    }
    for entry in board.entries:  # one numeric series per pair, so the UI plots them over time
        pair = f"{entry.set_identifier}/{entry.retriever_identifier}"
        metadata[f"top1_hit_rate/{pair}"] = MetadataValue.float(entry.top1_hit_rate)
        metadata[f"top3_hit_rate/{pair}"] = MetadataValue.float(entry.top3_hit_rate)
    return metadata


def _rounded(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


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
