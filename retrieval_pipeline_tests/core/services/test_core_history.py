"""A key's history as summaries, newest first, each complete run with its deltas to its baseline."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from core_helpers import run_from_codes, utc

from retrieval_pipeline.core.services.history import RunSummary, run_history
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
    assert (newest.baseline_run_id, newest.top1_delta, newest.top3_delta) == (second.run_id, 0.5, 0.25)
    assert (middle.baseline_run_id, middle.top1_delta, middle.top3_delta) == (first.run_id, -0.5, -0.25)
    assert (incomplete.baseline_run_id, incomplete.top1_delta) == (None, None)
    assert incomplete.summary.complete is False and incomplete.summary.errored_count == 1
    assert (oldest.baseline_run_id, oldest.top1_delta) == (None, None)


def test_history_summaries_carry_the_stored_figures(store):
    (run,) = save_runs(store, ["13-"])
    (entry,) = run_history(store, KEY)
    assert [k for k, _, _ in entry.summary.hit_rate_intervals] == [1, 3] and dict(entry.summary.metrics)["mrr@3"] > 0
    assert replace(entry.summary, hit_rate_intervals=(), metrics=()) == RunSummary(
        key=KEY,
        run_id=run.run_id,
        run_at=run.run_at,
        complete=True,
        question_count=3,
        errored_count=0,
        top1_hit_count=1,
        top1_hit_rate=pytest.approx(1 / 3),
        top3_hit_count=2,
        top3_hit_rate=pytest.approx(2 / 3),
        latency_p95_ms=1.0,
        index_version=None,
        hit_rates=((1, pytest.approx(1 / 3)), (3, pytest.approx(2 / 3))),
    )


def test_a_limited_history_still_gives_its_oldest_entry_a_delta(store):
    first, second, third = save_runs(store, ["----", "1---", "11--"])
    entries = run_history(store, KEY, limit=2)
    assert [e.summary.run_id for e in entries] == [third.run_id, second.run_id]
    assert (entries[1].baseline_run_id, entries[1].top1_delta) == (first.run_id, 0.25)


def test_an_empty_history_is_empty(store):
    assert run_history(store, KEY) == []
