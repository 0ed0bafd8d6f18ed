"""A run as one self-contained HTML page: the verdict, the pair's history chart (embedded, so the page
opens offline and can be attached to a CI job), rates, breakdowns, flipped questions, every question.

Jinja2 renders it with autoescaping on: ids, questions and error texts come from users' files and
services and must not become markup.
"""

from __future__ import annotations

from retrieval_pipeline.core.services.evaluation.chart_data import HistoryChartData
from retrieval_pipeline.core.services.views.evaluation_view import EvaluationView
from retrieval_pipeline.core.services.views.question_outcomes import misses_first, outcome


def html_report(view: EvaluationView, history: HistoryChartData, store_uri: str, note: str | None = None) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    from retrieval_pipeline.reports.charts import image_data_uri
    from retrieval_pipeline.reports.history_chart import history_chart_png

    environment = Environment(loader=PackageLoader("retrieval_pipeline.reports"), autoescape=select_autoescape(["html"]))
    chart = image_data_uri(history_chart_png(history)) if history.points else None
    return environment.get_template("report.html").render(
        view=view,
        run=view.run.result,
        verdict=view.verdict,
        questions=misses_first(view.run.result.questions),
        outcome=outcome,
        chart=chart,
        history_runs=len(history.points),
        store_uri=store_uri,
        note=note,
    )
