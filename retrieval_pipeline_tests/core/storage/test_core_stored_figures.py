"""The new figures in the stored summary (intervals, ranking metrics, latency mode) and runs stored before them."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from core_helpers import outcome

from retrieval_pipeline.core.retrieval.latency import BATCH_MEAN
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.services.evaluation.history import run_history
from retrieval_pipeline.core.services.evaluation.leaderboard import build_leaderboard
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

NEW_COLUMNS = (
    "latency_mode",
    "latency_batch_mean_ms",
    "hit_rate_ci_low",
    "hit_rate_ci_high",
    "metric_names",
    "metric_values",
    "by_form_metrics",
    "by_hard_class_metrics",
)


def a_run(latency_mode="per_question", retriever="fixed") -> RunResult:
    questions = (
        outcome("q1", "1", latency_ms=2.0),
        outcome("q2", "3", form="gap", latency_ms=4.0),
        outcome("q3", "-", latency_ms=6.0),
    )
    return RunResult("demo.set", retriever, questions, cutoffs=(1, 3), latency_mode=latency_mode)


def summary_file(store_root, stored):
    return next(store_root.glob(f"summaries/**/{stored.file_name}"))


def test_the_summary_row_holds_intervals_metrics_and_the_latency_mode(tmp_path):
    store = ResultStore(str(tmp_path))
    run = a_run(BATCH_MEAN)
    row = store.read_summary(store.save(run))
    assert row["latency_mode"] == "batch_mean" and row["latency_batch_mean_ms"] == 4.0
    assert row["latency_p95_ms"] is None  # every question shares the batch mean: no percentile is stored
    assert list(zip(row["hit_rate_ci_low"], row["hit_rate_ci_high"])) == [pytest.approx(v) for v in run.intervals().values()]
    assert dict(zip(row["metric_names"], row["metric_values"])) == pytest.approx(run.metrics())
    by_form = {(r["key"], r["metric"]): r["value"] for r in row["by_form_metrics"]}
    assert by_form[("gap", "mrr@3")] == pytest.approx(1 / 3)
    assert store.load(store.history(HistoryKey("demo.set", "fixed"))[0]).latency_mode == "batch_mean"


def test_runs_stored_before_these_figures_still_load_list_and_rank(tmp_path):
    store = ResultStore(str(tmp_path))
    stored = store.save(a_run())
    path = summary_file(tmp_path, stored)
    pq.write_table(pq.read_table(path).drop_columns(list(NEW_COLUMNS)), path)  # as an older version wrote it

    loaded = store.load(stored)
    assert loaded.latency_mode == "per_question" and loaded.metrics() == a_run().metrics()  # rebuilt from the ids
    [entry] = run_history(store, HistoryKey("demo.set", "fixed"))
    assert entry.summary.latency_mode == "per_question" and "batch_mean" not in entry.summary.latency
    [board_entry] = build_leaderboard(store).entries
    assert set(board_entry.summary.figures) == {"top1", "top3"} and board_entry.summary.latency_text == "p95 6.00"
    assert "mrr@3" not in build_leaderboard(store).to_markdown()


def test_the_leaderboard_shows_ranking_metrics_and_latency_under_what_was_measured(tmp_path):
    store = ResultStore(str(tmp_path))
    store.save(a_run(BATCH_MEAN, retriever="lexical"))
    store.save(a_run(retriever="service"))
    board = build_leaderboard(store)
    assert [f.key for f in board.figures("demo.set") if f.measure.score] == ["mrr@3", "ndcg@3", "judged@3"]
    lexical, service = board.entry("demo.set", "lexical"), board.entry("demo.set", "service")
    assert lexical.summary.latency_text == "batch mean 4.00" and service.summary.latency_text == "p95 6.00"
    assert lexical.summary.figure("mrr@3") == pytest.approx((1 + 1 / 3) / 3)
    markdown = board.to_markdown()
    assert "| mrr@3 | ndcg@3 | judged@3 | latency ms |" in markdown and "batch mean 4.00" in markdown


def test_the_leaderboard_table_has_metric_columns_and_each_latency_under_its_own_name(tmp_path):
    store = ResultStore(str(tmp_path))
    store.save(a_run(BATCH_MEAN, retriever="lexical"))
    store.save(a_run(retriever="service"))
    rows = {row["retriever_identifier"]: row for row in build_leaderboard(store).to_table().to_pylist()}
    assert rows["lexical"]["latency_p95_ms"] is None and rows["lexical"]["latency_batch_mean_ms"] == 4.0
    assert rows["service"]["latency_p95_ms"] == 6.0 and rows["service"]["latency_batch_mean_ms"] is None
    assert rows["service"]["mrr@3"] == pytest.approx((1 + 1 / 3) / 3) and "recall@1" in rows["service"]
