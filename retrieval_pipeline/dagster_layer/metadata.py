"""The metadata a person reads in the Dagster UI: rates to plot, breakdown and preview tables, URIs.

Built from the core's values only; secrets never reach it (a retriever's parameters are redacted), nor
a logged query (an evaluation weighted by traffic shows counts and shares only). Plain texts, counts and
flags are given as Python values, which Dagster types itself; a float, a table, Markdown or a link is
typed here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dagster import MetadataValue, TableColumn, TableRecord, TableSchema

from retrieval_pipeline.core.base.formatting import shortened
from retrieval_pipeline.core.base.redaction import fingerprint, redacted
from retrieval_pipeline.core.retrieval.retriever import BatchRetriever, BuildReport, Retriever, VersionedIndex
from retrieval_pipeline.core.scoring.measures import TESTED, Measure
from retrieval_pipeline.core.scoring.tolerances import Tolerances
from retrieval_pipeline.core.services.chart_data import history_chart_data
from retrieval_pipeline.core.services.evaluation import Evaluation
from retrieval_pipeline.core.services.leaderboard import Leaderboard
from retrieval_pipeline.core.services.views.breakdowns import Breakdown
from retrieval_pipeline.core.services.views.evaluation_view import evaluation_view
from retrieval_pipeline.core.services.views.leaderboard_rows import leaderboard_rows, ranking_measures
from retrieval_pipeline.core.services.views.question_outcomes import (
    ID_WIDTH,
    OUTCOMES_TEXT,
    PREVIEW_ROWS,
    READING_ORDER_TEXT,
    preview_rows,
)
from retrieval_pipeline.core.services.views.traffic_view import TrafficView
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.dagster_layer.resources import RetrievalProject
from retrieval_pipeline.reports.charts import history_chart_png, leaderboard_chart_png, markdown_image

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


def _leaderboard_schema(ranking: list[Measure]) -> TableSchema:
    """The rates a person compares as text, each ranking measure as text too, under its own name (the
    depth may differ between sets), then latency and the run."""
    return TableSchema(
        columns=[
            TableColumn("set", "string"),
            TableColumn("rank", "int"),
            TableColumn("retriever", "string"),
            *[TableColumn(figure.key, "string", description=figure.measure.label) for figure in TESTED],
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
        "name": question_set.name,
        "description": MetadataValue.md(question_set.description or "(none)"),
        "source": project.config.question_sets.source_of(question_set.identifier),
        "question_count": len(questions),
        "dagster/row_count": len(questions),
        "no_answer_questions": sum(1 for q in questions if not q.expected_document_ids),
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
        "verdict": verdict.sentence,
        "verdict_status": verdict.status,
        # "32.1% (77/240), 95% CI 26.5–38.2%": the rate a person reads, with how far it can be trusted
        **{row.key: row.now_text for row in view.run.rates},
        "history_chart": MetadataValue.md(markdown_image(chart, alt)),
        **{f"{row.key}_hit_rate": plotted(row.value, 4) for row in view.run.rates},
        "question_count": MetadataValue.int(run.question_count),
        "dagster/row_count": MetadataValue.int(run.question_count),
        **{f"{row.key}_hits": MetadataValue.int(row.count) for row in view.run.tested},
        "errored_questions": len(run.errored_question_ids),
        "complete": run.complete,
        "is_regression": verdict.is_regression,
        "set_fingerprint": run.set_fingerprint or "none",
        "labels": run.labels,
        "by_form": _rates_table(view.run.by_form),
        "by_hard_class": _rates_table(view.run.by_hard_class),
        "questions_preview_order": f"{min(PREVIEW_ROWS, run.question_count)} of {run.question_count} questions: "
        f"{READING_ORDER_TEXT} (every question: result_uri)",
        "questions_preview": table(PREVIEW_SCHEMA, preview_rows(run.questions, run.cutoffs[-1])),
        "result_uri": _uri_value(store.questions_uri(evaluation.stored)),
        "summary_uri": _uri_value(store.summary_uri(evaluation.stored)),
        "run_id": run.run_id,
        "baseline_run_id": verdict.baseline_run_id or "none",
        # cut short so a 64-digit hash does not widen the page; the stored summary keeps it whole
        "index_version": shortened(run.index_version, ID_WIDTH + 8) if run.index_version else "not reported",
        "latency_mode": run.latency_mode,
        # plotted, so numbers; to the three decimals a score reads with
        **{row.key: plotted(row.value, 3) for row in view.run.ranking},
    }
    if not view.run.by_hard_class.rows:
        del metadata["by_hard_class"]
    if run.approximation is not None:  # an exact run's metadata keeps the entries it always had
        metadata["approximate"] = run.approximation.sentence
        if run.approximation.overlap is not None:
            metadata[f"approximate_top{run.approximation.depth}_overlap"] = plotted(run.approximation.overlap, 4)
    rates = view.run.rates
    intervals = {f"{row.key}_ci_{end}": plotted(value, 4) for row in rates for end, value in zip(("low", "high"), row.interval)}
    latency = {f"latency_{row.statistic}_ms": plotted(row.value, 3) for row in view.run.latency}
    return metadata | intervals | latency | _weighted_metadata(view.traffic)


def _weighted_metadata(view: TrafficView | None) -> dict[str, Any]:
    """`weighted_top1` as the text a person reads ("50.6%, 95% CI 25.2–75.7%") and `weighted_top1_value`
    as the float the UI plots, like the plain `top1` and `top1_hit_rate`; nothing for a run weighted by
    no log, so its metadata stays as it was."""
    if view is None:
        return {}
    metadata: dict[str, Any] = {
        "traffic": view.sentence,
        "traffic_log": view.log,
        "traffic_fingerprint": view.fingerprint or "none",
        "traffic_total": MetadataValue.int(view.total),
        "traffic_effective_questions": plotted(view.effective_questions, 2),
        "zero_traffic_questions": len(view.zero_traffic),
        "weighted_gate": view.gated,
    }
    for row in view.rows:
        metadata[f"weighted_{row.key}"] = row.now_text
        metadata[f"weighted_{row.key}_value"] = plotted(row.value, 4)
        if row.change is not None:
            metadata[f"weighted_{row.key}_delta"] = plotted(row.change, 4)
    return metadata


def retriever_metadata(spec, retriever: Retriever, build_seconds: float) -> dict[str, Any]:
    configuration = redacted(spec.params)
    return {
        "kind": spec.kind,
        "configuration": MetadataValue.json(configuration),
        "configuration_fingerprint": fingerprint(spec.kind, configuration),
        "index_version": retriever.index_version() if isinstance(retriever, VersionedIndex) else "not reported",
        "batch_retrieval": isinstance(retriever, BatchRetriever),
        "build_seconds": plotted(build_seconds, 3),
        **(_report_values(retriever.build_report()) if isinstance(retriever, BuildReport) else {}),
    }


def _report_values(report: Mapping[str, str | int | float | bool]) -> dict[str, Any]:
    """What the kind says building did, each value typed for the UI (a bool is an int to Python)."""
    typed = {bool: MetadataValue.bool, int: MetadataValue.int, float: MetadataValue.float}
    return {
        f"build_{name}": typed.get(type(value), lambda v: MetadataValue.text(str(v)))(value) for name, value in report.items()
    }


def leaderboard_metadata(board: Leaderboard, project: RetrievalProject) -> dict[str, Any]:
    ranking = ranking_measures(board)
    metadata: dict[str, Any] = {
        "leaderboard": table(_leaderboard_schema(ranking), leaderboard_rows(board, ranking)),
        "summary": MetadataValue.md(board.to_markdown()),
        "leaderboard_chart": MetadataValue.md(
            markdown_image(leaderboard_chart_png(board), "latest top-1 and top-3 hit rates of every retriever")
            if board.entries
            else "No complete evaluation run yet."
        ),
        "pairs_evaluated": len(board.entries),
        "pairs_not_evaluated": len(board.missing),
        "store": _uri_value(project.resolved_store_uri),
        "configuration": MetadataValue.path(str(project.config.path)),
    }
    for entry in board.entries:  # one numeric series per pair, so the UI plots them over time
        pair = f"{entry.set_identifier}/{entry.retriever_identifier}"
        for figure in TESTED:
            metadata[f"{figure.column}/{pair}"] = plotted(entry.summary.figures[figure.key], 4)
    return metadata


def _uri_value(uri: str) -> MetadataValue:
    return MetadataValue.url(uri) if "://" in uri else MetadataValue.path(uri)


def _count_table(counts: Mapping[str, int]) -> MetadataValue:
    return table(COUNT_SCHEMA, ({"key": key, "questions": count} for key, count in counts.items()))


def _rates_table(breakdown: Breakdown) -> MetadataValue:
    rows = ({"key": row.key, "questions": row.questions, **{cell.key: cell.text for cell in row.rates}} for row in breakdown.rows)
    return table(RATES_SCHEMA, rows)


def plotted(value: float | None, digits: int | None = None) -> MetadataValue | None:
    """A float the UI plots, to the digits it reads with; typed, because a whole number given plainly (a
    configured `threshold: 1`) would become an int. None, which Dagster shows as null, where there is none."""
    if value is None:
        return None
    return MetadataValue.float(value if digits is None else round(value, digits))


def table(schema: TableSchema, rows: Iterable[Mapping[str, Any]]) -> MetadataValue:
    return MetadataValue.table(records=[TableRecord(row) for row in rows], schema=schema)
