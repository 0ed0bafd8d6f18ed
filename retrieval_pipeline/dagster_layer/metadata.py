"""The metadata a person reads in the Dagster UI: rates to plot, breakdown and preview tables, URIs.

Built from the core's values only; secrets never reach it (a retriever's parameters are redacted).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dagster import MetadataValue, TableColumn, TableRecord, TableSchema

from retrieval_pipeline.core.base.formatting import id_list, shortened
from retrieval_pipeline.core.base.redaction import fingerprint, redacted
from retrieval_pipeline.core.retrieval.retriever import BatchRetriever, BuildReport, Retriever, VersionedIndex
from retrieval_pipeline.core.scoring.measures import HIT_RATE, TESTED, Figure, Measure
from retrieval_pipeline.core.scoring.results import QuestionResult
from retrieval_pipeline.core.scoring.tolerances import Tolerances
from retrieval_pipeline.core.services.chart_data import history_chart_data
from retrieval_pipeline.core.services.evaluation import Evaluation
from retrieval_pipeline.core.services.leaderboard import Leaderboard, LeaderboardEntry, figure_cells, recorded_figures
from retrieval_pipeline.core.services.views.breakdowns import Breakdown
from retrieval_pipeline.core.services.views.evaluation_view import evaluation_view
from retrieval_pipeline.core.services.views.question_outcomes import OUTCOMES_TEXT, READING_ORDER_TEXT, misses_first, outcome
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.dagster_layer.resources import RetrievalProject
from retrieval_pipeline.dagster_layer.weighted_metadata import weighted_metadata
from retrieval_pipeline.reports.charts import history_chart_png, leaderboard_chart_png, markdown_image

PREVIEW_ROWS = 20
PREVIEW_IDS = 3
ID_WIDTH = 18

COUNT_SCHEMA = TableSchema(columns=[TableColumn("key", "string"), TableColumn("questions", "int")])
RATES_SCHEMA = TableSchema(
    columns=[
        TableColumn("key", "string"),
        TableColumn("questions", "int"),
        *[TableColumn(figure.key, "string", description=f"{figure.title.capitalize()} hit rate") for figure in TESTED],
    ]
)
PREVIEW_SCHEMA = TableSchema(
    columns=[
        TableColumn("question", "string", description="Question id"),
        TableColumn("outcome", "string", description=OUTCOMES_TEXT),
        TableColumn("form", "string"),
        TableColumn("class", "string", description="Hard class"),
        TableColumn("expected", "string", description="Expected document ids (any one is a hit)"),
        TableColumn("retrieved", "string", description="Distinct document ids retrieved, best first"),
        TableColumn("unjudged", "string", description="Retrieved ids nobody judged (neither expected nor rejected)"),
    ]
)


def _leaderboard_schema(rates: list[Figure], ranking: list[Measure]) -> TableSchema:
    """The rates a person compares as text, each ranking measure as text too, under its own name (the
    depth may differ between sets), then latency and the run."""
    return TableSchema(
        columns=[
            TableColumn("set", "string"),
            TableColumn("rank", "int"),
            TableColumn("retriever", "string"),
            *[TableColumn(figure.key, "string", description=figure.measure.label) for figure in rates],
            TableColumn("questions", "int"),
            TableColumn("p95_latency_ms", "float", description="Empty when the questions were timed in batches"),
            TableColumn("batch_mean_latency_ms", "float", description="Mean per question of batch calls (no percentiles)"),
            *[
                TableColumn(measure.name, "string", description=f"{measure.label} at the run's deepest cut-off")
                for measure in ranking
            ],
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


def evaluation_metadata(evaluation: Evaluation, store: ResultStore, tolerances: Tolerances) -> dict[str, Any]:
    """Text first (what a person reads: the verdict, the rates as percentages, the pair's own history
    chart, read from the store that now holds this run), then the floats the UI plots, then tables and links."""
    view = evaluation_view(evaluation)
    run, verdict = view.run.result, view.verdict
    key = HistoryKey(run.set_identifier, run.retriever_identifier, run.grader)
    chart = history_chart_png(history_chart_data(store, key, tolerances, baseline_run_id=verdict.baseline_run_id))
    alt = f"top-k hit rates of {key.set_identifier} × {key.retriever_identifier}, last runs"
    metadata: dict[str, Any] = {
        "verdict": MetadataValue.text(verdict.sentence),
        "verdict_status": MetadataValue.text(verdict.status),
        # "32.1% (77/240), 95% CI 26.5–38.2%": the rate a person reads, with how far it can be trusted
        **{row.key: MetadataValue.text(row.now_text) for row in view.run.rates},
        "history_chart": MetadataValue.md(markdown_image(chart, alt)),
        **{f"{row.key}_hit_rate": MetadataValue.float(round(row.value, 4)) for row in view.run.rates},
        "question_count": MetadataValue.int(run.question_count),
        "dagster/row_count": MetadataValue.int(run.question_count),
        **{f"{row.key}_hits": MetadataValue.int(row.count) for row in view.run.tested},
        "errored_questions": MetadataValue.int(len(run.errored_question_ids)),
        "complete": MetadataValue.bool(run.complete),
        "is_regression": MetadataValue.bool(verdict.is_regression),
        "set_fingerprint": MetadataValue.text(run.set_fingerprint or "none"),
        "labels": MetadataValue.text(run.labels),
        "by_form": _rates_table(view.run.by_form),
        "by_hard_class": _rates_table(view.run.by_hard_class),
        "questions_preview_order": MetadataValue.text(
            f"{min(PREVIEW_ROWS, run.question_count)} of {run.question_count} questions: {READING_ORDER_TEXT} "
            "(every question: result_uri)"
        ),
        "questions_preview": _preview_table(run.questions, run.cutoffs[-1]),
        "result_uri": _uri_value(store.questions_uri(evaluation.stored)),
        "summary_uri": _uri_value(store.summary_uri(evaluation.stored)),
        "run_id": MetadataValue.text(run.run_id),
        "baseline_run_id": MetadataValue.text(verdict.baseline_run_id or "none"),
        # cut short so a 64-digit hash does not widen the page; the stored summary keeps it whole
        "index_version": MetadataValue.text(shortened(run.index_version, ID_WIDTH + 8) if run.index_version else "not reported"),
        "latency_mode": MetadataValue.text(run.latency_mode),
        # plotted, so numbers; to the three decimals a score reads with
        **{row.key: MetadataValue.float(round(row.value, 3)) for row in view.run.ranking},
    }
    if not view.run.by_hard_class.rows:
        del metadata["by_hard_class"]
    if run.approximation is not None:  # an exact run's metadata keeps the entries it always had
        metadata["approximate"] = MetadataValue.text(run.approximation.sentence)
        if run.approximation.overlap is not None:
            metadata[f"approximate_top{run.approximation.depth}_overlap"] = MetadataValue.float(
                round(run.approximation.overlap, 4)
            )
    for row in view.run.rates:
        low, high = row.interval
        metadata[f"{row.key}_ci_low"] = MetadataValue.float(round(low, 4))
        metadata[f"{row.key}_ci_high"] = MetadataValue.float(round(high, 4))
    for row in view.run.latency:
        metadata[f"latency_{row.statistic}_ms"] = MetadataValue.float(round(row.value, 3))
    return metadata | weighted_metadata(view.traffic)


def retriever_metadata(spec, retriever: Retriever, build_seconds: float) -> dict[str, Any]:
    configuration = redacted(spec.params)
    return {
        "kind": MetadataValue.text(spec.kind),
        "configuration": MetadataValue.json(configuration),
        "configuration_fingerprint": MetadataValue.text(fingerprint(spec.kind, configuration)),
        "index_version": MetadataValue.text(
            retriever.index_version() if isinstance(retriever, VersionedIndex) else "not reported"
        ),
        "batch_retrieval": MetadataValue.bool(isinstance(retriever, BatchRetriever)),
        "build_seconds": MetadataValue.float(round(build_seconds, 3)),
        **(_report_values(retriever.build_report()) if isinstance(retriever, BuildReport) else {}),
    }


def _report_values(report: Mapping[str, str | int | float | bool]) -> dict[str, Any]:
    """What the kind says building did, each value typed for the UI (a bool is an int to Python)."""
    typed = {bool: MetadataValue.bool, int: MetadataValue.int, float: MetadataValue.float}
    return {
        f"build_{name}": typed.get(type(value), lambda v: MetadataValue.text(str(v)))(value) for name, value in report.items()
    }


def leaderboard_metadata(board: Leaderboard, project: RetrievalProject) -> dict[str, Any]:
    gated = list(TESTED)
    recorded = recorded_figures(board.entries, headline=True)
    ranking = list({figure.measure.name: figure.measure for figure in recorded if figure.measure is not HIT_RATE}.values())
    metadata: dict[str, Any] = {
        "leaderboard": table(
            _leaderboard_schema(gated, ranking),
            (
                {
                    "set": entry.set_identifier,
                    "rank": rank,
                    "retriever": entry.retriever_identifier,
                    **dict(zip([figure.key for figure in gated], figure_cells(entry.summary, gated))),
                    "questions": entry.summary.question_count,
                    "p95_latency_ms": _rounded(entry.summary.latency.get("p95")),
                    "batch_mean_latency_ms": _rounded(entry.summary.latency.get("batch_mean")),
                    **{measure.name: _at_depth(entry, measure) for measure in ranking},
                    "run_id": entry.run_id,
                    "latest_run_complete": entry.latest_run_complete,
                }
                for set_identifier in board.set_identifiers
                for rank, entry in enumerate(board.for_set(set_identifier), start=1)
            ),
        ),
        "summary": MetadataValue.md(board.to_markdown()),
        "leaderboard_chart": MetadataValue.md(
            markdown_image(leaderboard_chart_png(board), "latest top-1 and top-3 hit rates of every retriever")
            if board.entries
            else "No complete evaluation run yet."
        ),
        "pairs_evaluated": MetadataValue.int(len(board.entries)),
        "pairs_not_evaluated": MetadataValue.int(len(board.missing)),
        "store": _uri_value(project.resolved_store_uri),
        "configuration": MetadataValue.path(str(project.config.path)),
    }
    for entry in board.entries:  # one numeric series per pair, so the UI plots them over time
        pair = f"{entry.set_identifier}/{entry.retriever_identifier}"
        for figure in gated:
            metadata[f"{figure.column}/{pair}"] = MetadataValue.float(round(entry.summary.figures[figure.key], 4))
    return metadata


def _at_depth(entry: LeaderboardEntry, measure: Measure) -> str:
    """As the measure reads ("0.515"); empty where the run did not record it."""
    value = entry.summary.figure(measure.key(entry.summary.cutoffs[-1]))
    return "" if value is None else measure.text(value)


def _rounded(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def _uri_value(uri: str) -> MetadataValue:
    return MetadataValue.url(uri) if "://" in uri else MetadataValue.path(uri)


def _count_table(counts: Mapping[str, int]) -> MetadataValue:
    return table(COUNT_SCHEMA, ({"key": key, "questions": count} for key, count in counts.items()))


def _rates_table(breakdown: Breakdown) -> MetadataValue:
    rows = ({"key": row.key, "questions": row.questions, **{cell.key: cell.text for cell in row.rates}} for row in breakdown.rows)
    return table(RATES_SCHEMA, rows)


def _preview_table(questions: Sequence[QuestionResult], depth: int) -> MetadataValue:
    """The first rows a reviewer wants, in the reading order (misses before hits). Ids are
    cut short and lists capped so the table fits the page; the stored result has them whole."""
    shown = misses_first(questions)[:PREVIEW_ROWS]
    return table(
        PREVIEW_SCHEMA,
        (
            {
                "question": shortened(q.question_id, ID_WIDTH),
                "outcome": outcome(q) if q.error is None else f"error: {shortened(q.error, ID_WIDTH)}",
                "form": q.form,
                "class": q.hard_class,
                "expected": id_list(q.expected_document_ids, PREVIEW_IDS, ID_WIDTH) if q.expected_document_ids else "(none)",
                "retrieved": id_list(q.retrieved_document_ids, PREVIEW_IDS, ID_WIDTH),
                "unjudged": id_list(q.unjudged_document_ids(depth), PREVIEW_IDS, ID_WIDTH),
            }
            for q in shown
        ),
    )


def table(schema: TableSchema, rows: Iterable[Mapping[str, Any]]) -> MetadataValue:
    return MetadataValue.table(records=[TableRecord(row) for row in rows], schema=schema)
