"""The leaderboard: every pair's latest complete run (its baseline), best first within a set."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from core_helpers import outcome, run_from_codes, utc

from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.services.evaluation.leaderboard import build_leaderboard
from retrieval_pipeline.core.storage.store import ResultStore

DAY = timedelta(days=1)
START = utc(2025, 3, 1)


@pytest.fixture
def store(tmp_path):
    return ResultStore(str(tmp_path / "results"))


def save(store, codes, retriever, set_identifier="demo.set", day=0, **kwargs):
    run = run_from_codes(codes, retriever_identifier=retriever, set_identifier=set_identifier, run_at=START + day * DAY, **kwargs)
    store.save(run)
    return run


def test_each_pair_shows_its_latest_complete_run_best_first(store):
    save(store, "1111", "lexical", day=0)
    latest_lexical = save(store, "13--", "lexical", day=1)
    save(store, "113-", "vector", day=0)
    latest_vector = save(store, "----", "vector", day=2)
    board = build_leaderboard(store)
    assert [e.retriever_identifier for e in board.for_set("demo.set")] == ["lexical", "vector"]
    assert board.entry("demo.set", "lexical").run_id == latest_lexical.run_id
    assert board.entry("demo.set", "lexical").summary.hit_rate(1) == 0.25
    assert board.entry("demo.set", "vector").run_id == latest_vector.run_id
    assert board.entry("demo.set", "vector").summary.hit_rate(1) == 0.0
    assert board.entry("demo.set", "vector").latest_run_complete is True


def test_a_pair_whose_latest_run_is_incomplete_shows_its_baseline_and_says_so(store):
    baseline = save(store, "11", "remote", day=0)
    save(store, "1E", "remote", day=1)
    entry = build_leaderboard(store).entry("demo.set", "remote")
    assert entry.run_id == baseline.run_id
    assert entry.latest_run_complete is False
    assert "(latest run incomplete)" in build_leaderboard(store).to_markdown()


def test_requested_pairs_without_a_complete_run_are_listed_as_missing(store):
    save(store, "1", "lexical")
    save(store, "E", "remote")
    board = build_leaderboard(store, ["demo.set"], ["lexical", "remote", "vector"])
    assert [e.retriever_identifier for e in board.entries] == ["lexical"]
    assert board.missing == (("demo.set", "remote"), ("demo.set", "vector"))
    assert "Not evaluated yet" in board.to_markdown()


def test_ties_rank_by_top3_then_name_and_sets_keep_their_order(store):
    save(store, "13", "beta", set_identifier="b.set")
    save(store, "1-", "alpha", set_identifier="b.set")
    save(store, "13", "alpha", set_identifier="a.set")
    board = build_leaderboard(store, ["b.set", "a.set"])
    assert board.set_identifiers == ["b.set", "a.set"]
    assert [e.retriever_identifier for e in board.for_set("b.set")] == ["beta", "alpha"]
    markdown = board.to_markdown()
    assert "### `b.set`" in markdown and "### Side by side" in markdown
    assert "| `beta` | 50.0% / 100.0% |" in markdown


def test_deeper_cutoffs_stay_in_the_table_not_in_the_markdown_a_person_compares(store):
    questions = (outcome("q1", "1"),)
    store.save(RunResult("demo.set", "deep", questions, run_at=START, cutoffs=(1, 3, 10)))
    board = build_leaderboard(store)
    summary = board.entries[0].summary
    assert [(k, summary.hit_rate(k)) for k in summary.cutoffs] == [(1, 1.0), (3, 1.0), (10, 1.0)]
    header = board.to_markdown().splitlines()[2]
    assert header == "| # | retriever | top-1 | top-3 | mrr@10 | ndcg@10 | judged@10 | latency ms |"
    assert board.to_table().column("top10_hit_rate").to_pylist() == [1.0]


def test_other_graders_histories_stay_off_the_leaderboard(store):
    store.save(RunResult("demo.set", "judge", (outcome("q1", "1"),), run_at=START, grader="llm_judge"))
    assert build_leaderboard(store).entries == ()
    assert build_leaderboard(store).to_markdown() == "No complete evaluation run yet."


def test_the_table_ranks_each_set_and_has_a_rate_column_per_cutoff_of_any_run(store):
    save(store, "1-", "alpha", set_identifier="b.set")
    save(store, "13", "beta", set_identifier="b.set")
    store.save(RunResult("a.set", "deep", (outcome("q1", "-"),), run_at=START, cutoffs=(1, 3, 10)))
    table = build_leaderboard(store, ["b.set", "a.set"]).to_table()
    assert table.column_names[:6] == [
        "set_identifier",
        "rank",
        "retriever_identifier",
        "top1_hit_rate",
        "top3_hit_rate",
        "top10_hit_rate",
    ]
    rows = [
        (r["set_identifier"], r["rank"], r["retriever_identifier"], r["top3_hit_rate"], r["top10_hit_rate"])
        for r in table.to_pylist()
    ]
    assert rows == [("b.set", 1, "beta", 1.0, None), ("b.set", 2, "alpha", 0.5, None), ("a.set", 1, "deep", 0.0, 0.0)]


def test_an_empty_board_is_an_empty_table_with_its_columns(store):
    table = build_leaderboard(store).to_table()
    assert table.num_rows == 0 and {"set_identifier", "rank", "top1_hit_rate", "top3_hit_rate"} <= set(table.column_names)


def test_a_run_scored_with_machine_labels_is_marked_on_the_leaderboard(store):
    save(store, "11", "lexical")
    store.save(replace(run_from_codes("1-", retriever_identifier="vector", run_at=START), labels="human+machine"))
    board = build_leaderboard(store)
    markdown = board.to_markdown()
    assert "`vector` (labels human+machine)" in markdown and "`lexical` |" in markdown
    assert dict(
        zip(board.to_table().column("retriever_identifier").to_pylist(), board.to_table().column("labels").to_pylist())
    ) == {
        "lexical": "human",
        "vector": "human+machine",
    }
