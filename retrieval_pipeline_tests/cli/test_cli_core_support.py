"""The core modules the command line asked for: comparison, history summaries, set file writer."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.question_file_writer import dump_question_set, write_question_set_file
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet
from retrieval_pipeline.core.scoring.checks.comparison import compare_runs
from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
from retrieval_pipeline.core.services.evaluation.history import run_history
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def run_of(retriever: str, codes: str, *, forms: str | None = None, run_at: datetime = START) -> RunResult:
    """Question i: "1" top-1 hit, "3" top-3 hit only, "-" miss, "E" retriever error."""
    retrieved = {"1": ("t", "x", "y"), "3": ("x", "y", "t"), "-": ("x", "y", "z"), "E": ()}
    questions = tuple(
        QuestionResult(
            question_id=f"q{i + 1}",
            form="gap" if forms and forms[i] == "g" else "match",
            hard_class="normal" if i % 2 else None,
            expected_document_ids=("t",),
            retrieved_document_ids=retrieved[code],
            latency_ms=1.0,
            error="down" if code == "E" else None,
        )
        for i, code in enumerate(codes)
    )
    return RunResult("s", retriever, questions, run_at=run_at)


def test_comparison_pairs_every_run_with_the_reference():
    reference = run_of("a", "1111111111")
    other = run_of("b", "----------")

    comparison = compare_runs([reference, other])

    top1 = comparison.test("b", 1)
    assert (top1.first_only, top1.second_only, top1.delta) == (10, 0, -1.0)
    assert top1.p_value == pytest.approx(2 / 2**10)
    assert comparison.test("a", 1) is None
    assert [d.question_id for d in comparison.disagreements] == [f"q{i}" for i in range(1, 11)]


def test_comparison_disagreements_cover_every_cutoff_and_errors():
    comparison = compare_runs([run_of("a", "13-1"), run_of("b", "11-E"), run_of("c", "13-1")])

    assert [d.question_id for d in comparison.disagreements] == ["q2", "q4"]
    assert comparison.disagreements[1].hits(1) == (True, None, True)
    errored = comparison.test("b", 1)
    assert (errored.first_only, errored.second_only) == (0, 1)  # q4 errored under b: left out


def test_comparison_groups_keep_first_seen_order_across_runs():
    comparison = compare_runs([run_of("a", "1-", forms="gm"), run_of("b", "-1", forms="gm")])

    assert [g.key for g in comparison.by_form] == ["gap", "match"]
    assert [r.hit_rate(1) for r in comparison.by_form[0].rates] == [1.0, 0.0]
    assert [g.key for g in comparison.by_hard_class] == ["normal"]


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        ([run_of("a", "1")], "at least two"),
        ([run_of("a", "1"), run_of("a", "1")], "more than once"),
    ],
)
def test_comparison_refuses_runs_that_cannot_be_paired(runs, message):
    with pytest.raises(InvalidInputError, match=message):
        compare_runs(runs)


def test_history_reads_summaries_and_skips_incomplete_runs_as_baselines(tmp_path):
    store = ResultStore(str(tmp_path / "store"))
    for minutes, codes in enumerate(["11", "1-", "1E", "--"]):
        store.save(run_of("a", codes, run_at=START + timedelta(minutes=minutes)))

    entries = run_history(store, HistoryKey("s", "a"))

    assert [e.summary.hit_rate(1) for e in entries] == [0.0, 0.5, 0.5, 1.0]
    assert [e.summary.complete for e in entries] == [True, False, True, True]
    assert [e.deltas.get("top1") for e in entries] == [-0.5, None, -0.5, None]
    assert entries[0].baseline_run_id == entries[2].summary.run_id
    limited = run_history(store, HistoryKey("s", "a"), limit=1)
    assert len(limited) == 1 and limited[0].deltas["top1"] == -0.5
    assert run_history(store, HistoryKey("s", "nobody")) == []


QUESTION_SET = GoldenQuestionSet(
    identifier="w.set",
    name="Writer set",
    description="unicode: é ✓",
    questions=(
        GoldenQuestion(id="1", question="Wing flutter: why?", form="match", expected_document_ids=("a", "b")),
        GoldenQuestion(
            id="2",
            question="nothing answers",
            form="gap",
            expected_document_ids=(),
            hard_class="normal",
            answer_gist="no document",
        ),
    ),
)


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".json", ".jsonl"])
def test_written_set_files_load_back_identically(tmp_path, suffix):
    path = write_question_set_file(QUESTION_SET, tmp_path / f"set{suffix}")

    assert load_question_set_file(path) == QUESTION_SET
    assert oct(path.stat().st_mode & 0o777) != oct(0o600)  # not left private like its temporary file


def test_the_writer_refuses_to_overwrite_and_unknown_suffixes(tmp_path):
    path = tmp_path / "set.yaml"
    path.write_text("keep")
    with pytest.raises(InvalidInputError, match="already exists"):
        write_question_set_file(QUESTION_SET, path)
    assert path.read_text() == "keep"
    write_question_set_file(QUESTION_SET, path, overwrite=True)
    assert load_question_set_file(path) == QUESTION_SET
    with pytest.raises(InvalidInputError, match="unsupported"):
        dump_question_set(QUESTION_SET, ".csv")
    with pytest.raises(InvalidInputError, match="unsupported"):
        write_question_set_file(QUESTION_SET, tmp_path / "set.txt")
