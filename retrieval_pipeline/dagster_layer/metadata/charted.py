"""The metadata that carries a chart, drawn here (`reports/` sits above the core) and handed to its
builder as Markdown: an evaluation's with its pair's history, the leaderboard's with the latest rates
(and, for a set of conversations, its rates by turn depth)."""

from __future__ import annotations

from typing import Any

from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.services.evaluation.chart_data import history_chart_data
from retrieval_pipeline.core.services.evaluation.leaderboard import Leaderboard
from retrieval_pipeline.core.services.evaluation.record import Evaluation
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.dagster_layer.metadata import evaluation as evaluation_ui
from retrieval_pipeline.dagster_layer.metadata import project as project_ui
from retrieval_pipeline.dagster_layer.metadata.values import typed
from retrieval_pipeline.dagster_layer.resources import RetrievalProject
from retrieval_pipeline.reports.charts import leaderboard_chart_png, markdown_image, turn_depth_chart_png
from retrieval_pipeline.reports.history_svg import history_chart_svg


def evaluation_metadata(evaluation: Evaluation, store: ResultStore, tolerances: Tolerances) -> dict[str, Any]:
    """With the pair's own history chart, read from the store that now holds this run: an SVG written
    directly, not matplotlib's PNG, since every partition draws one."""
    run = evaluation.run
    key = HistoryKey(run.set_identifier, run.retriever_identifier, run.grader)
    chart = history_chart_svg(history_chart_data(store, key, tolerances, baseline_run_id=evaluation.report.baseline_run_id))
    alt = f"top-k hit rates of {key.set_identifier} × {key.retriever_identifier}, last runs"
    return typed(evaluation_ui.evaluation_metadata(evaluation, store, markdown_image(chart, alt, "image/svg+xml")))


def leaderboard_metadata(board: Leaderboard, project: RetrievalProject) -> dict[str, Any]:
    alt = "latest top-1 and top-3 hit rates of every retriever"
    chart = markdown_image(leaderboard_chart_png(board), alt) if board.entries else None
    uri, path = project.resolved_store_uri, str(project.config.path)
    return typed(project_ui.leaderboard_metadata(board, uri, path, chart, depth_chart=turn_depth_markdown(board)))


def turn_depth_markdown(board: Leaderboard) -> str | None:
    """One chart per set of conversations, so a drop confined to later turns shows at a glance; None when no
    set recorded turns, and a board of single questions keeps the entries it always had."""
    charts = [(s, png) for s in board.set_identifiers if (png := turn_depth_chart_png(board, s)) is not None]
    images = [markdown_image(png, f"top-1 and top-3 hit rates of {s} by turn depth") for s, png in charts]
    return "\n\n".join(images) or None
