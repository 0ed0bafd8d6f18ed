"""Retention: old runs go, each key's latest readable run and latest readable complete run stay, and
nothing is deleted until everything has been checked."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from core_helpers import run_from_codes, utc

from retrieval_pipeline.core.base.errors import InvalidInputError, StoreError
from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
from retrieval_pipeline.core.storage.retention import MAX_RETENTION_DAYS, check_retention_days, prune
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

KEY = HistoryKey("demo.set", "fixed")
NOW = utc(2025, 6, 1, 12, 0, 0)


@pytest.fixture
def store(tmp_path):
    return ResultStore(str(tmp_path / "results"), on_skip=lambda skipped: None)


def days_ago(days: float):
    return NOW - timedelta(days=days)


def run_ids(runs):
    return [run.run_id for run in runs]


def summary_file(tmp_path, run) -> Path:
    name = f"{run.run_id}{'' if run.complete else '.incomplete'}.parquet"
    return tmp_path / "results" / "summaries" / KEY.parts / name


# --- retention --------------------------------------------------------------------------------


def test_retention_removes_old_runs_but_keeps_the_latest_and_the_latest_complete(store):
    old_complete = run_from_codes("11", run_at=days_ago(90))
    latest_complete = run_from_codes("11", run_at=days_ago(60))
    latest_incomplete = run_from_codes("1E", run_at=days_ago(45))
    for run in (old_complete, latest_complete, latest_incomplete):
        store.save(run)
    removed = prune(store, timedelta(days=30), now=NOW).runs
    assert run_ids(removed) == [old_complete.run_id]
    assert run_ids(store.history(KEY)) == [latest_incomplete.run_id, latest_complete.run_id]
    assert store.baseline(KEY) == latest_complete


def test_retention_keeps_recent_runs_and_removes_both_files_of_old_ones(store, tmp_path):
    old = [run_from_codes("1", run_at=days_ago(d)) for d in (90, 60)]
    recent = [run_from_codes("1", run_at=days_ago(d)) for d in (10, 1)]
    for run in old + recent:
        store.save(run)
    removed = prune(store, timedelta(days=30), now=NOW).runs
    assert sorted(run_ids(removed)) == sorted(run_ids(old))
    assert run_ids(store.history(KEY)) == [recent[1].run_id, recent[0].run_id]
    question_files = sorted(p.name for p in (tmp_path / "results" / "questions").rglob("*.parquet"))
    assert question_files == sorted(f"{run.run_id}.parquet" for run in recent)


def test_retention_never_removes_a_keys_only_run(store):
    ancient = run_from_codes("1", run_at=days_ago(400))
    store.save(ancient)
    assert prune(store, timedelta(days=30), now=NOW).runs == ()
    assert store.baseline(KEY) == ancient


def test_retention_treats_each_key_on_its_own(store):
    lexical_old = run_from_codes("1", retriever_identifier="lexical", run_at=days_ago(90))
    lexical_new = run_from_codes("1", retriever_identifier="lexical", run_at=days_ago(1))
    vector_old = run_from_codes("1", retriever_identifier="vector", run_at=days_ago(90))
    for run in (lexical_old, lexical_new, vector_old):
        store.save(run)
    assert run_ids(prune(store, timedelta(days=30), now=NOW).runs) == [lexical_old.run_id]
    assert store.baseline(HistoryKey("demo.set", "vector")) == vector_old


def test_retention_also_deletes_the_leftovers_of_crashed_saves(store, tmp_path):
    old = datetime(2020, 1, 1, tzinfo=timezone.utc)
    kept = store.save(_leftover_run(old + timedelta(days=1)))
    crashed = _leftover_run(old)
    folder = tmp_path / "results" / "questions" / kept.key.parts
    orphan = folder / f"{crashed.run_id}.parquet"
    partial = folder / f".partial-{crashed.run_id}.parquet"
    orphan.write_bytes(b"half a run")
    partial.write_bytes(b"half a file")
    foreign = folder / "notes.txt"
    foreign.write_text("not ours")
    prune(store, timedelta(days=30), now=datetime(2026, 1, 1, tzinfo=timezone.utc))
    assert not orphan.exists() and not partial.exists()
    assert foreign.exists() and [run.run_id for run in store.history(kept.key)] == [kept.run_id]


def _leftover_run(run_at):
    question = QuestionResult("q1", "match", None, ("d1",), ("d1",), 1.0)
    return RunResult("demo.set", "bm25", (question,), run_at=run_at)


def test_an_unreadable_newest_run_never_costs_the_latest_readable_complete_run(store, tmp_path):
    old, latest_readable = run_from_codes("11", run_at=days_ago(90)), run_from_codes("11", run_at=days_ago(60))
    damaged = run_from_codes("11", run_at=days_ago(45))
    for run in (old, latest_readable, damaged):
        store.save(run)
    summary_file(tmp_path, damaged).write_bytes(b"")

    plan = prune(store, timedelta(days=30), now=NOW)

    assert run_ids(plan.runs) == [old.run_id]
    assert summary_file(tmp_path, damaged).exists(), "prune acted on a file it cannot parse"
    assert store.baseline(KEY) == latest_readable


def test_a_run_whose_question_file_does_not_parse_is_left_alone(store, tmp_path):
    runs = [run_from_codes("11", run_at=days_ago(days)) for days in (90, 60, 1)]
    for run in runs:
        store.save(run)
    damaged = tmp_path / "results" / "questions" / KEY.parts / f"{runs[0].run_id}.parquet"
    damaged.write_bytes(b"PAR1 cut short")

    assert run_ids(prune(store, timedelta(days=30), now=NOW).runs) == [runs[1].run_id]
    assert damaged.exists() and summary_file(tmp_path, runs[0]).exists()


def test_nothing_is_deleted_when_any_key_cannot_be_read(store, tmp_path, monkeypatch):
    old = run_from_codes("1", retriever_identifier="lexical", run_at=days_ago(90))
    for run in (old, run_from_codes("1", retriever_identifier="lexical", run_at=days_ago(1))):
        store.save(run)
    store.save(run_from_codes("1", retriever_identifier="vector", run_at=days_ago(1)))
    monkeypatch.setattr(store, "fs", UnlistableFolder(store.fs, f"/vector/{KEY.grader}"))

    with pytest.raises(StoreError, match="connection reset"):
        prune(store, timedelta(days=30), now=NOW)
    monkeypatch.undo()
    assert old.run_id in run_ids(store.history(HistoryKey("demo.set", "lexical")))


class UnlistableFolder:
    """The store's file system, failing to list the one folder ending in `suffix` (a network fault)."""

    def __init__(self, inner, suffix: str):
        self._inner, self._suffix = inner, suffix

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def get_file_info(self, selector):
        if selector.base_dir.endswith(self._suffix):
            raise OSError("connection reset")
        return self._inner.get_file_info(selector)


def test_a_dry_run_plans_exactly_what_a_prune_removes_and_removes_nothing(store, tmp_path):
    runs = [run_from_codes("1", run_at=days_ago(days)) for days in (90, 60, 1)]
    for run in runs:
        store.save(run)
    files = sorted((tmp_path / "results").rglob("*"))

    planned = prune(store, timedelta(days=30), now=NOW, dry_run=True)
    assert sorted((tmp_path / "results").rglob("*")) == files
    assert prune(store, timedelta(days=30), now=NOW) == planned
    assert run_ids(planned.runs) == [runs[1].run_id, runs[0].run_id]


def test_the_leftovers_of_a_save_still_in_progress_are_never_touched(store, tmp_path):
    store.save(run_from_codes("1", run_at=days_ago(1)))
    in_progress = run_from_codes("1", run_at=NOW - timedelta(minutes=5))
    partial = tmp_path / "results" / "questions" / KEY.parts / f".partial-{in_progress.run_id}.parquet"
    partial.write_bytes(b"being written")

    assert prune(store, timedelta(days=0), now=NOW).leftovers == ()
    assert partial.exists()


@pytest.mark.parametrize("days", [math.nan, math.inf, -math.inf, -1, MAX_RETENTION_DAYS + 1, 1e300, True, "30"])
def test_retention_days_outside_0_to_100_years_are_refused(days):
    with pytest.raises(InvalidInputError, match=f"from 0 to {MAX_RETENTION_DAYS}"):
        check_retention_days(days)


def test_retention_days_from_0_to_100_years_are_accepted():
    assert [check_retention_days(days) for days in (0, 0.5, 30, MAX_RETENTION_DAYS)] == [0, 0.5, 30, MAX_RETENTION_DAYS]
