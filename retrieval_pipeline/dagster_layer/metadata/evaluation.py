"""The evaluation's materialization metadata: the verdict and the rates as text first (what a person reads),
then the floats the UI plots, then tables and links."""

from __future__ import annotations

from typing import Any

from retrieval_pipeline.core.base.formatting import shortened
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.services.evaluation.record import Evaluation
from retrieval_pipeline.core.services.views.breakdowns import Breakdown
from retrieval_pipeline.core.services.views.evaluation_view import evaluation_view
from retrieval_pipeline.core.services.views.question_outcomes import (
    ID_WIDTH,
    OUTCOMES_TEXT,
    PREVIEW_ROWS,
    READING_ORDER_TEXT,
    preview_rows,
)
from retrieval_pipeline.core.services.views.traffic_view import TrafficView
from retrieval_pipeline.core.storage.store import ResultStore
from retrieval_pipeline.dagster_layer.metadata.values import Column, Link, Markdown, Table, plotted, table

RATES_COLUMNS = (
    Column("key", "string"),
    Column("questions", "int"),
    *[Column(figure.key, "string", description=f"{figure.title.capitalize()} hit rate") for figure in TESTED],
)
PREVIEW_COLUMNS = (
    Column("question", "string", description="Question id"),
    Column("outcome", "string", description=OUTCOMES_TEXT),
    Column("form", "string"),
    Column("class", "string", description="Hard class"),
    Column("expected", "string", description="Expected document ids (any one is a hit)"),
    Column("retrieved", "string", description="Distinct document ids retrieved, best first"),
    Column("unjudged", "string", description="Retrieved ids nobody judged (neither expected nor rejected)"),
)


def evaluation_metadata(evaluation: Evaluation, store: ResultStore, history_chart: str) -> dict[str, Any]:
    """`history_chart`: the pair's own history as Markdown (an image), read from the store that now holds
    this run; drawn above the core, by `reports/charts.py`."""
    view = evaluation_view(evaluation)
    run, verdict = view.run.result, view.verdict
    metadata: dict[str, Any] = {
        "verdict": verdict.sentence,
        "verdict_status": verdict.status,
        # "32.1% (77/240), 95% CI 26.5–38.2%": the rate a person reads, with how far it can be trusted
        **{row.key: row.now_text for row in view.run.rates},
        "history_chart": Markdown(history_chart),
        **{f"{row.key}_hit_rate": plotted(row.value, 4) for row in view.run.rates},
        "question_count": run.question_count,
        "dagster/row_count": run.question_count,
        **{f"{row.key}_hits": row.count for row in view.run.tested},
        "errored_questions": len(run.errored_question_ids),
        "complete": run.complete,
        "is_regression": verdict.is_regression,
        "set_fingerprint": run.set_fingerprint or "none",
        "labels": run.labels,
        **{f"by_{breakdown.name}": rates_table(breakdown) for breakdown in view.run.breakdowns},
        "questions_preview_order": f"{min(PREVIEW_ROWS, run.question_count)} of {run.question_count} questions: "
        f"{READING_ORDER_TEXT} (every question: result_uri)",
        "questions_preview": table(PREVIEW_COLUMNS, preview_rows(run.questions, run.cutoffs[-1])),
        "result_uri": Link(store.questions_uri(evaluation.stored)),
        "summary_uri": Link(store.summary_uri(evaluation.stored)),
        "run_id": run.run_id,
        "baseline_run_id": verdict.baseline_run_id or "none",
        # cut short so a 64-digit hash does not widen the page; the stored summary keeps it whole
        "index_version": shortened(run.index_version, ID_WIDTH + 8) if run.index_version else "not reported",
        "latency_mode": run.latency_mode,
        # plotted, so numbers; to the three decimals a score reads with
        **{row.key: plotted(row.value, 3) for row in view.run.ranking},
    }
    if view.run.conversations is not None:  # a run of single questions keeps the entries it always had
        metadata[view.run.conversations.key] = view.run.conversations_text
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
        "traffic_total": view.total,
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


def rates_table(breakdown: Breakdown) -> Table:
    rows = ({"key": row.key, "questions": row.questions, **{cell.key: cell.text for cell in row.rates}} for row in breakdown.rows)
    return table(RATES_COLUMNS, rows)
