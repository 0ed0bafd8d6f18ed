"""A run as one self-contained HTML page: the verdict, the pair's history chart (embedded, so the page
opens offline and can be attached to a CI job), rates, breakdowns, flipped questions, every question.

Jinja2 renders it with autoescaping on: ids, questions and error texts come from users' files and
services and must not become markup.
"""

from __future__ import annotations

from retrieval_pipeline.core.services.chart_data import HistoryChartData
from retrieval_pipeline.core.services.evaluation import Evaluation
from retrieval_pipeline.reports.rows import (
    breakdowns,
    compared,
    misses_first,
    outcome,
    rate_rows,
    set_change_line,
    verdict_label,
)


def html_report(evaluation: Evaluation, history: HistoryChartData, store_uri: str, note: str | None = None) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    from retrieval_pipeline.reports.charts import history_chart_png, png_data_uri

    environment = Environment(loader=PackageLoader("retrieval_pipeline.reports"), autoescape=select_autoescape(["html"]))
    chart = png_data_uri(history_chart_png(history)) if history.points else None
    return environment.get_template("report.html").render(
        run=evaluation.run,
        report=evaluation.report,
        baseline=evaluation.baseline,
        label=verdict_label(evaluation),
        compared=compared(evaluation),
        set_change=set_change_line(evaluation),
        rates=rate_rows(evaluation),
        breakdowns=breakdowns(evaluation),
        questions=misses_first(evaluation.run.questions),
        outcome=outcome,
        chart=chart,
        history_runs=len(history.points),
        store_uri=store_uri,
        note=note,
    )
