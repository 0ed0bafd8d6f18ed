"""A key's history as summaries, newest first, each complete run with its deltas to its baseline."""

from __future__ import annotations

from datetime import timedelta

import pytest
from core_helpers import run_from_codes, utc

from retrieval_pipeline.core.services.evaluation.history import run_history
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

KEY = HistoryKey("demo.set", "fixed")
START = utc(2025, 1, 1)


@pytest.fixture
def store(tmp_path):
    return ResultStore(str(tmp_path / "results"))


def save_runs(store, codes_list):
    runs = [run_from_codes(codes, run_at=START + timedelta(days=day)) for day, codes in enumerate(codes_list)]
    for run in runs:
        store.save(run)
    return runs


def test_history_lists_summaries_newest_first_with_deltas_to_the_previous_complete_run(store):
    first, broken, second, third = save_runs(store, ["1111", "11E1", "113-", "1111"])
    entries = run_history(store, KEY)
    assert [e.summary.run_id for e in entries] == [third.run_id, second.run_id, broken.run_id, first.run_id]
    newest, middle, incomplete, oldest = entries
    assert (newest.baseline_run_id, newest.deltas["top1"], newest.deltas["top3"]) == (second.run_id, 0.5, 0.25)
    assert (middle.baseline_run_id, middle.deltas["top1"], middle.deltas["top3"]) == (first.run_id, -0.5, -0.25)
    assert (incomplete.baseline_run_id, incomplete.deltas.get("top1")) == (None, None)
    assert incomplete.summary.complete is False and incomplete.summary.errored_count == 1
    assert (oldest.baseline_run_id, oldest.deltas.get("top1")) == (None, None)


def test_history_summaries_carry_the_stored_figures(store):
    (run,) = save_runs(store, ["13-"])
    (entry,) = run_history(store, KEY)
    summary = entry.summary
    assert list(summary.intervals) == ["top1", "top3"] and summary.figures["mrr@3"] > 0
    assert (summary.key, summary.run_id, summary.run_at, summary.complete) == (KEY, run.run_id, run.run_at, True)
    assert (summary.question_count, summary.errored_count, summary.hit_count(1), summary.hit_count(3)) == (3, 0, 1, 2)
    assert (summary.hit_rate(1), summary.hit_rate(3)) == (pytest.approx(1 / 3), pytest.approx(2 / 3))
    assert (summary.cutoffs, summary.latency["p95"], summary.index_version) == ((1, 3), 1.0, None)


def test_a_limited_history_still_gives_its_oldest_entry_a_delta(store):
    first, second, third = save_runs(store, ["----", "1---", "11--"])
    entries = run_history(store, KEY, limit=2)
    assert [e.summary.run_id for e in entries] == [third.run_id, second.run_id]
    assert (entries[1].baseline_run_id, entries[1].deltas["top1"]) == (first.run_id, 0.25)


def test_an_empty_history_is_empty(store):
    assert run_history(store, KEY) == []
