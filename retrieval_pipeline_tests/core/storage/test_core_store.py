"""The Parquet result store: history never lost, never mixed, readable by any Parquet reader."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from datetime import datetime, timedelta, timezone

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from core_helpers import outcome, question, question_set, run_from_codes, utc

from retrieval_pipeline.core.base.errors import StoreError
from retrieval_pipeline.core.scoring.results import GRADER, RunResult
from retrieval_pipeline.core.storage.retention import prune
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

KEY = HistoryKey("demo.set", "fixed")
NOW = utc(2025, 6, 1, 12, 0, 0)


@pytest.fixture
def store(tmp_path):
    return ResultStore(str(tmp_path / "results"))


def days_ago(days: float):
    return NOW - timedelta(days=days)


def run_ids(runs):
    return [run.run_id for run in runs]


# --- saving and reading -----------------------------------------------------------------------


def test_a_saved_run_loads_back_equal(store):
    run = run_from_codes("13-E", forms="mgmg", hard_classes=["normal", None, "boilerplate", None])
    stored = store.save(run)
    assert (stored.key, stored.run_id, stored.complete) == (KEY, run.run_id, False)
    loaded = store.load(stored)
    assert loaded == run
    assert loaded.questions[3].error == run.questions[3].error
    assert loaded.hit_rate(1) == run.hit_rate(1)


def test_the_latest_run_reads_as_one_table_with_its_identity_and_hits_at_every_cutoff(store):
    store.save(run_from_codes("11", run_at=days_ago(2)))
    questions = (outcome("q1", "1"), outcome("q2", "3", hard_class="normal"), outcome("q3", "E"), outcome("q4", "-"))
    latest = RunResult("demo.set", "fixed", questions, run_at=days_ago(1), cutoffs=(1, 2, 3, 5), index_version="idx-2")
    store.save(latest)

    table = store.latest_run_table(KEY)

    assert table.column_names == [
        "set_identifier",
        "retriever_identifier",
        "run_at",
        "complete",
        "index_version",
        "set_fingerprint",
        "latency_mode",
        "query_mode",
        "run_id",
        "question_id",
        "form",
        "hard_class",
        "expected_document_ids",
        "retrieved_document_ids",
        "top1_hit",
        "top2_hit",
        "top3_hit",
        "top5_hit",
        "latency_ms",
        "error",
        "question_fingerprint",
        "rejected_document_ids",
        "machine_judged_document_ids",
        "conversation",
        "turn",
        "query",
    ]
    rows = table.to_pylist()
    assert {(r["set_identifier"], r["retriever_identifier"], r["run_id"], r["complete"], r["index_version"]) for r in rows} == {
        ("demo.set", "fixed", latest.run_id, False, "idx-2")
    }
    assert [r["run_at"] for r in rows] == [latest.run_at] * 4
    assert [(r["top1_hit"], r["top2_hit"], r["top3_hit"], r["top5_hit"]) for r in rows] == [
        (True, True, True, True),
        (False, False, True, True),
        (None, None, None, None),  # the retriever failed: neither hit nor miss
        (False, False, False, False),
    ]
    assert rows[2]["error"] == questions[2].error and rows[1]["hard_class"] == "normal"


def test_fingerprints_and_columns_a_newer_writer_added_pass_through_to_the_run_table(store, tmp_path):
    """The set version reaches every row; a later per-question column reaches the table unknown to this reader."""
    run = RunResult("demo.set", "fixed", tuple(outcome(f"q{i}", "1", fingerprint=f"f{i}") for i in (1, 2)))
    store.save(run)
    path = str(tmp_path / "results" / "questions" / "demo.set" / "fixed" / GRADER / f"{run.run_id}.parquet")
    pq.write_table(pq.read_table(path).append_column("reviewer_note", pa.array(["ok", None])), path)

    table = store.latest_run_table(KEY)

    assert table.column("question_fingerprint").to_pylist() == ["f1", "f2"]
    assert table.column("set_fingerprint").to_pylist() == [run.set_fingerprint] * 2
    assert table.column("reviewer_note").to_pylist() == ["ok", None]


def test_a_key_without_runs_and_a_set_never_saved_read_as_none(store):
    assert store.latest_run_table(KEY) is None
    assert store.stored_question_set("demo.set") is None


def test_a_saved_question_set_reads_back_as_its_table(store):
    saved = question_set(question("a", ("d1", "d2"), hard_class="normal"), question("b", (), form="gap"))
    store.save_question_set(saved)
    rows = store.stored_question_set("demo.set").to_pylist()
    assert [(r["question_id"], r["form"], r["expected_document_ids"], r["hard_class"]) for r in rows] == [
        ("a", "match", ["d1", "d2"], "normal"),
        ("b", "gap", [], None),
    ]


def test_history_is_newest_first_and_knows_each_runs_time(store):
    runs = [run_from_codes("1", run_at=days_ago(d)) for d in (3, 1, 2)]
    for run in runs:
        store.save(run)
    history = store.history(KEY)
    assert run_ids(history) == [runs[1].run_id, runs[2].run_id, runs[0].run_id]
    assert [entry.run_at for entry in history] == [days_ago(1), days_ago(2), days_ago(3)]


def test_the_baseline_is_the_latest_complete_run(store):
    older = run_from_codes("11", run_at=days_ago(2))
    newer_incomplete = run_from_codes("1E", run_at=days_ago(1))
    store.save(older)
    store.save(newer_incomplete)
    assert store.history(KEY)[0].complete is False
    assert store.baseline(KEY) == older


def test_a_run_stamped_in_another_time_zone_is_listed_at_its_true_time(store):
    cest = timezone(timedelta(hours=2))
    run = run_from_codes("1", run_at=datetime(2025, 6, 1, 14, 0, tzinfo=cest))  # 12:00 UTC
    assert store.save(run).run_at == utc(2025, 6, 1, 12, 0)


def test_the_baseline_is_the_latest_run_even_across_time_zones(store):
    cest = timezone(timedelta(hours=2))
    earlier = run_from_codes("1", run_at=datetime(2025, 6, 1, 14, 0, tzinfo=cest))  # 12:00 UTC
    later = run_from_codes("-", run_at=utc(2025, 6, 1, 13, 0))
    store.save(earlier)
    store.save(later)
    assert run_ids(store.history(KEY)) == [later.run_id, earlier.run_id]
    assert store.baseline(KEY) == later


def test_an_empty_store_has_no_history_keys_or_baseline(store):
    assert store.history(KEY) == []
    assert store.baseline(KEY) is None
    assert store.keys() == []


def test_two_keys_never_mix(store):
    runs = {
        HistoryKey("demo.set", "lexical"): run_from_codes("11", retriever_identifier="lexical"),
        HistoryKey("demo.set", "vector"): run_from_codes("--", retriever_identifier="vector"),
        HistoryKey("other.set", "lexical"): run_from_codes("3", set_identifier="other.set", retriever_identifier="lexical"),
    }
    graded = RunResult("demo.set", "lexical", run_from_codes("-").questions, grader="llm_judge")
    runs[HistoryKey("demo.set", "lexical", "llm_judge")] = graded
    for run in runs.values():
        store.save(run)
    assert store.keys() == sorted(runs)
    for key, run in runs.items():
        assert run_ids(store.history(key)) == [run.run_id]
        assert store.baseline(key) == run
    assert HistoryKey("demo.set", "lexical").grader == GRADER


# --- atomic writes ----------------------------------------------------------------------------


class CrashingFileSystem:
    """The store's file system, failing `method` on any path holding `fragment` (a simulated crash)."""

    def __init__(self, inner, method: str, fragment: str):
        self._inner, self._method, self._fragment = inner, method, fragment

    def __getattr__(self, name: str):
        original = getattr(self._inner, name)
        if name != self._method:
            return original

        def failing(*args, **kwargs):
            if any(self._fragment in str(arg) for arg in args):
                raise OSError("disk full")
            return original(*args, **kwargs)

        return failing


def crash_when(store, monkeypatch, method: str, fragment: str):
    monkeypatch.setattr(store, "fs", CrashingFileSystem(store.fs, method, fragment))


def test_a_crash_writing_the_summary_leaves_the_previous_history_intact(store, monkeypatch, tmp_path):
    previous = run_from_codes("11", run_at=days_ago(1))
    store.save(previous)
    crash_when(store, monkeypatch, "open_output_stream", "/summaries/")
    failing = run_from_codes("--")
    with pytest.raises(StoreError, match="disk full"):
        store.save(failing)
    monkeypatch.undo()
    assert run_ids(store.history(KEY)) == [previous.run_id]
    assert store.baseline(KEY) == previous
    assert pd.read_parquet(tmp_path / "results" / "summaries")["run_id"].tolist() == [previous.run_id]


def test_a_crash_while_renaming_the_summary_takes_back_everything_the_save_wrote(store, monkeypatch, tmp_path):
    previous = run_from_codes("11", run_at=days_ago(1))
    store.save(previous)
    crash_when(store, monkeypatch, "move", "/summaries/")
    failing = run_from_codes("--")
    with pytest.raises(StoreError, match=f"cannot write to the result store: .*{failing.run_id}.parquet: disk full"):
        store.save(failing)
    monkeypatch.undo()
    written = sorted(path.name for path in (tmp_path / "results").rglob("*") if path.is_file())
    assert written == [f"{previous.run_id}.parquet"] * 2  # no partial summary, no orphan question file
    assert run_ids(store.history(KEY)) == [previous.run_id]
    assert store.baseline(KEY) == previous
    later = run_from_codes("1-")
    store.save(later)
    assert run_ids(store.history(KEY)) == [later.run_id, previous.run_id]


def test_a_partial_file_left_by_a_killed_process_is_never_listed(store, tmp_path):
    previous = run_from_codes("11", run_at=days_ago(1))
    store.save(previous)
    folder = tmp_path / "results" / "summaries" / "demo.set" / "fixed" / GRADER
    (folder / ".partial-20990101T000000000000Z-deadbeef.parquet").write_bytes(b"PAR1 truncated")
    (folder / ".partial-20990101T000000000000Z-deadbeef.incomplete.parquet").write_bytes(b"")
    assert run_ids(store.history(KEY)) == [previous.run_id]
    assert store.baseline(KEY) == previous
    assert prune(store, timedelta(days=30), now=NOW).runs == ()


def test_a_store_that_cannot_be_written_fails_with_a_store_error(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store should be")
    with pytest.raises(StoreError, match="cannot write"):
        ResultStore(str(blocker)).save(run_from_codes("1"))


# --- any Parquet reader, any process, any file system -----------------------------------------

SAMPLE_RUN = textwrap.dedent(
    """
    from datetime import datetime, timezone
    from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
    run = RunResult(
        set_identifier="demo.set",
        retriever_identifier="bm25",
        run_id="20250102T030405678901Z-0123abcd",
        run_at=datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc),
        cutoffs=(1, 3, 5),
        index_version="idx-7",
        questions=(
            QuestionResult("q1", "match", "near-duplicate", ("d1", "d2"), ("d1", "d9", "d4"), 1.25),
            QuestionResult("q2", "gap", None, ("d3",), ("d7", "d3"), 2.5),
            QuestionResult("q3", "gap", "near-duplicate", (), (), 0.75),
            QuestionResult("q4", "match", None, ("d5",), ("d6", "d8", "d9", "d5", "d1"), 4.0),
        ),
    )
    """
)


def sample_run() -> RunResult:
    namespace: dict = {}
    exec(SAMPLE_RUN, namespace)
    return namespace["run"]


@pytest.mark.slow
def test_a_run_written_by_another_process_reads_back_identically_with_pyarrow_and_pandas(tmp_path):
    root = tmp_path / "shared-results"
    writer = (
        SAMPLE_RUN + f"\nfrom retrieval_pipeline.core.storage.store import ResultStore\nResultStore({str(root)!r}).save(run)\n"
    )
    subprocess.run([sys.executable, "-c", writer], check=True, capture_output=True, timeout=120)
    expected = sample_run()

    summaries_pd = pd.read_parquet(root / "summaries")
    summaries_pa = pq.read_table(root / "summaries").to_pylist()
    assert len(summaries_pd) == len(summaries_pa) == 1
    row = summaries_pa[0]
    assert summaries_pd.iloc[0]["run_id"] == row["run_id"] == expected.run_id
    assert summaries_pd.iloc[0]["run_at"] == pd.Timestamp(expected.run_at) == pd.Timestamp(row["run_at"])
    for column, value in {
        "set_identifier": "demo.set",
        "retriever_identifier": "bm25",
        "grader": GRADER,
        "complete": True,
        "question_count": 4,
        "errored_count": 0,
        "top1_hit_count": 2,
        "top3_hit_count": 3,
        "top1_hit_rate": 0.5,
        "top3_hit_rate": 0.75,
        "pass_rate": 0.5,
        "mean_score": 0.75,
        "index_version": "idx-7",
    }.items():
        assert row[column] == value, column
        assert summaries_pd.iloc[0][column] == value, column
    assert row["cutoffs"] == list(summaries_pd.iloc[0]["cutoffs"]) == [1, 3, 5]
    assert row["hit_rates"] == list(summaries_pd.iloc[0]["hit_rates"]) == [0.5, 0.75, 1.0]
    assert row["by_form"] == [
        {"key": "match", "questions": 2, "top1_hit_rate": 0.5, "top3_hit_rate": 0.5},
        {"key": "gap", "questions": 2, "top1_hit_rate": 0.5, "top3_hit_rate": 1.0},
    ]
    assert (
        [dict(group) for group in summaries_pd.iloc[0]["by_hard_class"]]
        == row["by_hard_class"]
        == [
            {"key": "near-duplicate", "questions": 2, "top1_hit_rate": 1.0, "top3_hit_rate": 1.0},
        ]
    )

    questions_pd = pd.read_parquet(root / "questions")
    questions_pa = pq.read_table(root / "questions").to_pylist()
    assert questions_pd["question_id"].tolist() == [q["question_id"] for q in questions_pa] == ["q1", "q2", "q3", "q4"]
    assert [list(ids) for ids in questions_pd["retrieved_document_ids"]] == [q["retrieved_document_ids"] for q in questions_pa]
    assert [q["retrieved_document_ids"] for q in questions_pa] == [list(q.retrieved_document_ids) for q in expected.questions]
    assert [q["expected_document_ids"] for q in questions_pa] == [list(q.expected_document_ids) for q in expected.questions]
    assert [q["top1_hit"] for q in questions_pa] == questions_pd["top1_hit"].tolist() == [True, False, True, False]
    assert [q["top3_hit"] for q in questions_pa] == questions_pd["top3_hit"].tolist() == [True, True, True, False]
    assert questions_pd["latency_ms"].tolist() == [q["latency_ms"] for q in questions_pa] == [1.25, 2.5, 0.75, 4.0]
    assert [q["hard_class"] for q in questions_pa] == ["near-duplicate", None, "near-duplicate", None]

    store = ResultStore(str(root))
    (stored,) = store.history(HistoryKey("demo.set", "bm25"))
    loaded = store.load(stored)
    assert loaded == expected
    assert loaded.run_at == expected.run_at
    assert loaded.questions == expected.questions


def test_an_object_store_uri_works_like_a_folder():
    store = ResultStore(f"memory://retrieval-tests-{uuid.uuid4().hex}/results")
    first = run_from_codes("11", run_at=days_ago(90))
    second = run_from_codes("1E", run_at=days_ago(60))
    third = run_from_codes("1-", run_at=days_ago(1))
    for run in (first, second, third):
        store.save(run)
    assert store.keys() == [KEY]
    assert run_ids(store.history(KEY)) == [third.run_id, second.run_id, first.run_id]
    assert store.baseline(KEY) == third
    assert store.load(store.history(KEY)[1]) == second
    assert run_ids(prune(store, timedelta(days=30), now=NOW).runs) == [second.run_id, first.run_id]
    assert run_ids(store.history(KEY)) == [third.run_id]
