"""Where a run shows what its turns were asked with: each question's `query` in the `--json` rows and the
HTML report, the run's `query_mode` in its document, its Markdown line and the report's header."""

from __future__ import annotations

import pytest
from conversation_project import conversations, write_project

from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.chart_data import HistoryChartData
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.services.views.evaluation_view import evaluation_document, evaluation_view, markdown_summary
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.reports.html import html_report
from retrieval_pipeline.retrievers.lexical import retriever as lexical

ASKED = "how much ice have alpine glaciers lost?\nwhen did that begin?"


@pytest.fixture
def evaluated(tmp_path):
    lexical.INDEXES.clear()
    project = load_config(write_project(tmp_path, {"bm25_history2": {"conversation": {"history": 2}}, "bm25": {}}))
    settings = EvaluationSettings.from_config(project)
    store = ResultStore(str(tmp_path / "results"))

    def evaluated(retriever: str):
        return evaluation_view(evaluate_and_record(conversations(), project.retriever(retriever), store, settings), settings)

    return evaluated


def test_the_json_rows_carry_each_questions_query_and_the_document_the_runs_mode(evaluated):
    document = evaluation_document(evaluated("bm25_history2"))

    assert document["query_mode"] == "history:2"
    assert {row["id"]: row["query"] for row in document["questions"]}["glaciers/2"] == ASKED
    assert {row["id"]: row["query"] for row in document["questions"]}["bees"] is None


def test_the_markdown_line_and_the_html_report_say_how_the_turns_were_asked(evaluated):
    view = evaluated("bm25_history2")
    page = html_report(
        view, HistoryChartData(HistoryKey("demo.conversations", "bm25_history2"), (), view.settings.tolerances), "results"
    )

    assert "turns asked as history:2" in markdown_summary(view)
    assert "turns asked as history:2" in page
    assert f'<div class="query">asked as: {ASKED}</div>' in page


def test_a_run_asking_every_turn_as_typed_shows_no_query(evaluated):
    view = evaluated("bm25")
    page = html_report(view, HistoryChartData(HistoryKey("demo.conversations", "bm25"), (), view.settings.tolerances), "results")

    assert "turns asked as" not in markdown_summary(view) and "asked as" not in page
    assert evaluation_document(view)["query_mode"] == "current"
