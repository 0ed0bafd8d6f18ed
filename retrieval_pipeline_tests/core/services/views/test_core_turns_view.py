"""Figures by turn in every output that reads the presentation model: the run's JSON and Markdown, the
check's deltas, the comparison beside a rewrite run, and the leaderboard by depth. A run of single
questions keeps the documents it always had."""

from __future__ import annotations

import pytest
from conversation_helpers import conversation_run
from core_helpers import run_from_codes

from retrieval_pipeline.core.scoring.checks.comparison import compare_runs
from retrieval_pipeline.core.scoring.checks.regression import detect_regression
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.services.evaluation.chart_data import HistoryChartData
from retrieval_pipeline.core.services.evaluation.history import run_history
from retrieval_pipeline.core.services.evaluation.leaderboard import build_leaderboard
from retrieval_pipeline.core.services.evaluation.record import Evaluation
from retrieval_pipeline.core.services.views.comparison.view import comparison_view
from retrieval_pipeline.core.services.views.evaluation_view import evaluation_document, evaluation_view, markdown_summary
from retrieval_pipeline.core.services.views.history_view import HistoryView
from retrieval_pipeline.core.services.views.leaderboard_rows import depth_rows
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.reports.html import html_report

ASKED = {"wings": "113", "flow": "1-", "heat": "11-31"}
REWRITTEN = {"wings": "111", "flow": "11", "heat": "11111"}


def evaluated(run, baseline=None) -> Evaluation:
    return Evaluation(run, detect_regression(run, baseline, Tolerances()), None, baseline)


def test_a_run_of_conversations_documents_its_rates_by_depth_and_its_conversations_all_hit():
    view = evaluation_view(evaluated(conversation_run(ASKED, singles="1-")))
    document = evaluation_document(view)
    assert document["by_turn_depth"]["3"]["questions"] == 2
    assert document["by_turn_depth"]["3"]["top1_hit_rate"] == 0.0 and document["by_turn_depth"]["3"]["top3_hit_rate"] == 0.5
    assert list(document["by_turn_depth"]) == ["1", "2", "3", "4+"]
    assert document["conversations_all_hit@3"] == {"conversations": 3, "all_hit": 1, "rate": pytest.approx(1 / 3)}
    markdown = markdown_summary(view)
    assert "Conversations: 33.3% (1/3) of conversations hit in the top 3 at every turn." in markdown
    assert "<summary>By turn depth</summary>" in markdown
    assert [breakdown.name for breakdown in view.run.breakdowns] == ["form", "turn_depth"]


def test_a_run_of_single_questions_keeps_the_documents_it_had_before_turns():
    view = evaluation_view(evaluated(run_from_codes("13-")))
    document = evaluation_document(view)
    assert "by_turn_depth" not in document and "conversations_all_hit@3" not in document
    assert "by_hard_class" in document  # listed even when empty, as always
    assert "by_turn_depth" not in document["regression"]
    assert "Conversations" not in markdown_summary(view) and view.run.conversations is None


def test_the_check_documents_its_deltas_by_depth():
    baseline = conversation_run({"a": "111", "b": "111"})
    current = conversation_run({"a": "111", "b": "11-"})
    document = evaluation_document(evaluation_view(evaluated(current, baseline)))
    assert document["regression"]["by_turn_depth"]["3"] == {"questions": 2, "top1_delta": -0.5, "top3_delta": -0.5}
    assert document["regression"]["by_turn_depth"]["1"]["top1_delta"] == 0.0


def test_a_comparison_with_a_rewrite_run_shows_each_other_runs_gap_overall_and_by_depth():
    asked = conversation_run(ASKED, singles="1-")
    rewritten = conversation_run(REWRITTEN, singles="1-", retriever="bm25_rewrite", rewrite=True)
    view = comparison_view(compare_runs([asked, rewritten]))
    [gap] = view.rewrite_gaps
    assert gap.retriever == "bm25_current" and gap.overall_text == "top-1 -40.0 pp, top-3 -20.0 pp"
    assert dict(gap.depth_texts)["3"] == "-100.0 pp / -50.0 pp"
    document = view.to_dict()
    assert document["rewrite_gaps"][0]["top1_gap"] == pytest.approx(-0.4)
    assert document["rewrite_gaps"][0]["rewrite_retriever"] == "bm25_rewrite"
    assert [table.label for table in view.group_tables] == ["form", "turn depth"]
    assert "`bm25_current` on the turns as asked against `bm25_rewrite` on their rewrites (10 turns)" in view.to_markdown()


def test_a_comparison_without_a_rewrite_run_has_no_gap():
    view = comparison_view(compare_runs([conversation_run(ASKED), conversation_run(REWRITTEN, retriever="bm25_history2")]))
    assert view.rewrite_gaps == () and "rewrite_gaps" not in view.to_dict()


def test_the_leaderboard_of_a_conversational_set_shows_each_depth_and_the_gap_beside_the_rewrite_run(tmp_path):
    store = ResultStore(str(tmp_path))
    store.save(conversation_run(ASKED))
    store.save(conversation_run(REWRITTEN, retriever="bm25_rewrite", rewrite=True))
    store.save(run_from_codes("13", set_identifier="demo.cranfield", retriever_identifier="bm25_current"))
    board = build_leaderboard(store)

    markdown = board.to_markdown()
    assert "### `demo.conversations` by turn depth" in markdown
    assert (
        "| `bm25_current` | 100.0% / 100.0% | 66.7% / 66.7% | 0.0% / 50.0% | 50.0% / 100.0% | 33.3% | -40.0 pp / -20.0 pp |"
        in markdown
    )
    assert "| `bm25_rewrite` | 100.0% / 100.0% | 100.0% / 100.0% | 100.0% / 100.0% | 100.0% / 100.0% | 100.0% |  |" in markdown
    assert "demo.cranfield` by turn depth" not in markdown

    table = board.to_table().to_pylist()
    current = next(
        row for row in table if row["retriever_identifier"] == "bm25_current" and row["set_identifier"] == "demo.conversations"
    )
    assert current["top1_hit_rate_depth_3"] == 0.0 and current["top3_hit_rate_depth_4+"] == 1.0
    assert current["conversations_all_hit@3"] == pytest.approx(1 / 3) and current["top1_rewrite_gap"] == pytest.approx(-0.4)
    cranfield = next(row for row in table if row["set_identifier"] == "demo.cranfield")
    assert cranfield["top1_hit_rate_depth_1"] is None

    rows = depth_rows(board)
    assert [(row["retriever"], row["depth_2"], row["rewrite_gap"]) for row in rows] == [
        ("bm25_rewrite", "100.0% / 100.0%", ""),
        ("bm25_current", "66.7% / 66.7%", "-40.0 pp / -20.0 pp"),
    ]


def test_the_leaderboard_sets_a_run_beside_the_rewrite_run_of_its_own_setup_only(tmp_path):
    store = ResultStore(str(tmp_path))
    store.save(conversation_run(ASKED, retriever="titles_current", setup="sha256:titles"))
    store.save(conversation_run(REWRITTEN, retriever="bm25_rewrite", rewrite=True))
    store.save(conversation_run(ASKED, retriever="bm25_history2"))

    gaps = {row["retriever"]: row["rewrite_gap"] for row in depth_rows(build_leaderboard(store))}

    assert gaps == {"bm25_rewrite": "", "bm25_history2": "-40.0 pp / -20.0 pp", "titles_current": ""}


def test_a_leaderboard_without_conversations_keeps_its_table_and_markdown(tmp_path):
    store = ResultStore(str(tmp_path))
    store.save(run_from_codes("13"))
    board = build_leaderboard(store)
    assert "turn depth" not in board.to_markdown() and depth_rows(board) == []
    assert not any("depth" in name for name in board.to_table().column_names)


def test_the_history_of_a_conversational_pair_documents_each_runs_rates_by_depth(tmp_path):
    store = ResultStore(str(tmp_path))
    store.save(conversation_run(ASKED))
    store.save(run_from_codes("13", set_identifier="demo.conversations", retriever_identifier="bm25_current"))
    key = HistoryKey("demo.conversations", "bm25_current")
    newest, oldest = HistoryView(key, store.uri, tuple(run_history(store, key)), False).to_dict()["runs"]
    assert oldest["by_turn_depth"]["4+"] == {"questions": 2, "top1_hit_rate": 0.5, "top3_hit_rate": 1.0}
    assert oldest["conversations_all_hit@3"]["all_hit"] == 1
    assert "by_turn_depth" not in newest and "conversations_all_hit@3" not in newest


def test_the_html_report_of_a_run_of_conversations_shows_its_depths_and_conversations_all_hit():
    view = evaluation_view(evaluated(conversation_run(ASKED, singles="1-")))
    key = HistoryKey("demo.conversations", "bm25_current")
    page = html_report(view, HistoryChartData(key, (), view.settings.tolerances), "results")
    assert "<h2>By turn depth</h2>" in page
    assert "<b>Conversations:</b> 33.3% (1/3) of conversations hit in the top 3 at every turn." in page
