"""The Dagster UI's metadata as the Dagster layer builds it from the core's views: plain values in the
order the UI lists them, floats that stay floats, and a leaderboard whose ranked table fits the asset's
Overview."""

from __future__ import annotations

import pytest
from core_helpers import question, question_set, retriever_for

from retrieval_pipeline.core.services.configuration.lookup import demo_config_path
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.leaderboard import build_leaderboard
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy
from retrieval_pipeline.core.services.views.evaluation_view import evaluation_view
from retrieval_pipeline.core.storage.store import ResultStore
from retrieval_pipeline.dagster_layer.metadata.evaluation import evaluation_metadata
from retrieval_pipeline.dagster_layer.metadata.project import leaderboard_metadata
from retrieval_pipeline.dagster_layer.metadata.regression import regression_metadata
from retrieval_pipeline.dagster_layer.metadata.values import Link, Markdown, Table, plotted

# The Overview of an asset in Dagster 1.13's UI, measured in Chromium: a table cell's text is monospace at
# about 8.5 px a character, each column adds about 14 px of padding and borders; the metadata table's Key
# and Timestamp columns take about 470 px beside a value; of a 1920 px-wide window the Value column shows
# about 650 px. The old single leaderboard table measured 1314 px, which made the metadata table 1784 px.
PX_PER_CHARACTER, COLUMN_PX, KEY_AND_TIMESTAMP_PX, VALUE_COLUMN_PX = 8.5, 14, 470, 650


def rendered_width(table: Table) -> float:
    """Each column as wide as its header or its longest cell, whichever is longer (no wrapping)."""

    def text(cell) -> str:
        return "" if cell is None else str(cell).lower() if isinstance(cell, bool) else str(cell)

    return sum(
        max(len(column.name), *(len(text(row[column.name])) for row in table.rows)) * PX_PER_CHARACTER + COLUMN_PX
        for column in table.columns
    )


@pytest.fixture(scope="module")
def demo_leaderboard(tmp_path_factory):
    config = load_config(demo_config_path())
    store = ResultStore(str(tmp_path_factory.mktemp("store")))
    demo_set = config.question_set("demo.cranfield")
    for identifier in config.retriever_identifiers:
        evaluate_and_record(demo_set, config.retriever(identifier), store, EvaluationSettings.from_config(config))
    board = build_leaderboard(store, list(config.question_sets), list(config.retriever_identifiers), rank_by=config.rank_by)
    return leaderboard_metadata(board, store.uri, str(config.path), chart=None)


def test_a_plotted_figure_is_a_python_float_even_when_whole_and_none_stays_none():
    assert plotted(1) == 1.0 and type(plotted(1)) is float  # a configured `threshold: 1` still plots as a float
    assert plotted(0.123456, 4) == 0.1235 and type(plotted(2, 3)) is float
    assert plotted(None) is None


def test_a_link_with_a_scheme_is_a_url_and_anything_else_a_path():
    assert Link("s3://bucket/results").is_url and Link("gs://b/r").is_url
    assert not Link("/home/ann/results").is_url and not Link("results").is_url


@pytest.mark.slow  # the demo's three retrievers evaluated
def test_the_leaderboards_ranked_table_fits_the_overviews_value_column_and_its_runs_are_a_second_table(demo_leaderboard):
    ranked, runs = demo_leaderboard["leaderboard"], demo_leaderboard["leaderboard_runs"]
    assert [column.name for column in ranked.columns] == ["set", "rank", "retriever", "top1", "top3", "mrr", "ndcg", "judged"]
    assert [column.name for column in runs.columns] == [
        "set",
        "retriever",
        "questions",
        "p95_latency_ms",
        "batch_mean_latency_ms",
        "run_id",
        "latest_run_complete",
    ]
    assert [(row["rank"], row["retriever"]) for row in ranked.rows] == [
        (rank, row["retriever"]) for rank, row in enumerate(runs.rows, 1)
    ]  # the same pairs, in the same order
    assert rendered_width(ranked) <= VALUE_COLUMN_PX  # seen whole, without scrolling, on a 1920 px-wide window
    assert all(KEY_AND_TIMESTAMP_PX + rendered_width(table) <= 1600 for table in (ranked, runs))
    together = Table(ranked.columns + runs.columns[2:], tuple(a | b for a, b in zip(ranked.rows, runs.rows)))
    assert KEY_AND_TIMESTAMP_PX + rendered_width(together) > 1600  # as one table, it was cut (the issue)
    assert demo_leaderboard["leaderboard_chart"] == Markdown("No complete evaluation run yet.")  # no chart drawn here
    assert list(demo_leaderboard)[:4] == ["leaderboard", "leaderboard_runs", "summary", "leaderboard_chart"]


def test_the_evaluations_metadata_reads_the_verdict_and_rates_first_then_the_chart_then_what_the_ui_plots(tmp_path):
    rankings = {"q1": ["d1"], "q2": ["n2", "d2"], "q3": ["n3"]}
    questions = question_set(*(question(f"q{i}", (f"d{i}",)) for i in range(1, 4)))
    store, settings = ResultStore(str(tmp_path / "results")), EvaluationSettings(retry=RetryPolicy(attempts=1, backoff_seconds=0))
    evaluation = evaluate_and_record(questions, retriever_for(rankings, questions), store, settings)

    metadata = evaluation_metadata(evaluation, store, "![chart](data:image/png;base64,AAAA)")

    assert list(metadata)[:6] == ["verdict", "verdict_status", "top1", "top3", "history_chart", "top1_hit_rate"]
    assert metadata["top1"].startswith("33.3% (1/3), 95% CI") and metadata["history_chart"].text.startswith("![chart]")
    assert metadata["top3_hit_rate"] == 0.6667 and type(metadata["top3_hit_rate"]) is float
    assert (metadata["question_count"], metadata["top3_hits"], metadata["complete"]) == (3, 2, True)
    assert isinstance(metadata["result_uri"], Link) and not metadata["result_uri"].is_url
    assert [column.name for column in metadata["questions_preview"].columns][:2] == ["question", "outcome"]
    assert "by_hard_class" not in metadata  # a set without hard classes draws no empty table


def test_the_checks_metadata_is_text_so_the_ui_plots_no_line_across_partitions(tmp_path):
    rankings = {"q1": ["d1"], "q2": ["d2"], "q3": ["n3"]}
    questions = question_set(*(question(f"q{i}", (f"d{i}",)) for i in range(1, 4)))
    store, settings = ResultStore(str(tmp_path / "results")), EvaluationSettings(retry=RetryPolicy(attempts=1, backoff_seconds=0))
    evaluate_and_record(questions, retriever_for(rankings, questions), store, settings)
    worse = evaluate_and_record(questions, retriever_for({**rankings, "q2": ["n2"]}, questions), store, settings)

    metadata = regression_metadata(evaluation_view(worse), settings.tolerances)

    assert metadata["verdict_status"] == "regression" and metadata["has_baseline"] is True
    assert metadata["top1_change"].startswith("-33.3 pp") and metadata["flipped_to_miss"] == ["q2"]
    assert metadata["flipped_to_miss_count"] == "1"
    assert not any(isinstance(value, float) for value in metadata.values())
