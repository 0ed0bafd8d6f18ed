"""The core's UI metadata (`core/services/views/ui_metadata`) typed for Dagster, and the charts it shows.

A table, Markdown, a link or a JSON document becomes its `MetadataValue`; a text, count, flag, id list or
float stays the Python value it is, which Dagster types itself. The charts are drawn here
(`reports/charts.py` sits above the core) and handed to the core's builders as Markdown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dagster import MetadataValue, TableColumn, TableRecord, TableSchema

from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.services.evaluation.chart_data import history_chart_data
from retrieval_pipeline.core.services.evaluation.leaderboard import Leaderboard
from retrieval_pipeline.core.services.evaluation.record import Evaluation
from retrieval_pipeline.core.services.views.ui_metadata import evaluation as evaluation_ui
from retrieval_pipeline.core.services.views.ui_metadata import project as project_ui
from retrieval_pipeline.core.services.views.ui_metadata.values import Json, Link, Markdown, Table
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.dagster_layer.resources import RetrievalProject
from retrieval_pipeline.reports.charts import leaderboard_chart_png, markdown_image
from retrieval_pipeline.reports.history_chart import history_chart_png


def typed(metadata: Mapping[str, Any]) -> dict[str, Any]:
    return {key: _typed(value) for key, value in metadata.items()}


def _typed(value: Any) -> Any:
    if isinstance(value, Table):
        schema = TableSchema(columns=[TableColumn(c.name, c.type, description=c.description) for c in value.columns])
        return MetadataValue.table(records=[TableRecord(row) for row in value.rows], schema=schema)
    if isinstance(value, Markdown):
        return MetadataValue.md(value.text)
    if isinstance(value, Link):
        return MetadataValue.url(value.uri) if value.is_url else MetadataValue.path(value.uri)
    if isinstance(value, Json):
        return MetadataValue.json(value.value)
    return value


def evaluation_metadata(evaluation: Evaluation, store: ResultStore, tolerances: Tolerances) -> dict[str, Any]:
    """With the pair's own history chart, read from the store that now holds this run."""
    run = evaluation.run
    key = HistoryKey(run.set_identifier, run.retriever_identifier, run.grader)
    chart = history_chart_png(history_chart_data(store, key, tolerances, baseline_run_id=evaluation.report.baseline_run_id))
    alt = f"top-k hit rates of {key.set_identifier} × {key.retriever_identifier}, last runs"
    return typed(evaluation_ui.evaluation_metadata(evaluation, store, markdown_image(chart, alt)))


def leaderboard_metadata(board: Leaderboard, project: RetrievalProject) -> dict[str, Any]:
    alt = "latest top-1 and top-3 hit rates of every retriever"
    chart = markdown_image(leaderboard_chart_png(board), alt) if board.entries else None
    return typed(project_ui.leaderboard_metadata(board, project.resolved_store_uri, str(project.config.path), chart))
