"""The scoring protocol of SPEC section 3, case by case, through the runner a user actually calls."""

from __future__ import annotations

import pytest
from core_helpers import RankingRetriever, collapse, is_hit, outcome, question, question_set, retriever_for

from retrieval_pipeline.core.retrieval.retriever import document_id_from_chunk
from retrieval_pipeline.core.scoring.results import GRADER, RunResult
from retrieval_pipeline.core.scoring.scoring import OVERFETCH_MULTIPLIER, CutOffs
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy, run_question_set

NO_WAIT = RetryPolicy(attempts=3, backoff_seconds=0)


def score_one(ranking, expected=("t",)):
    """Run a one-question set against a retriever that returns `ranking`; return its only result."""
    qs = question_set(question("q1", expected))
    run = run_question_set(qs, retriever_for({"q1": ranking}, qs), retry=NO_WAIT)
    return run.questions[0]


# --- the record's own cases -------------------------------------------------------------------


def test_target_at_rank_1_hits_both_cutoffs():
    result = score_one(["t", "b", "c"])
    assert (result.hit_at(1), result.hit_at(3)) == (True, True)


def test_target_at_rank_3_is_a_top3_hit_only():
    result = score_one(["a", "b", "t"])
    assert (result.hit_at(1), result.hit_at(3)) == (False, True)


def test_target_at_rank_4_misses_both_cutoffs():
    result = score_one(["a", "b", "c", "t"])
    assert (result.hit_at(1), result.hit_at(3)) == (False, False)


def test_any_of_several_targets_counts_as_a_hit():
    result = score_one(["a", "t2", "c"], expected=("t1", "t2", "t3"))
    assert (result.hit_at(1), result.hit_at(3)) == (False, True)
    result = score_one(["t3", "a"], expected=("t1", "t2", "t3"))
    assert (result.hit_at(1), result.hit_at(3)) == (True, True)


def test_repeated_ids_collapse_to_their_first_occurrence():
    assert collapse(["a", "a", "a", "b"], 3) == ("a", "b")
    assert score_one(["a", "a", "a", "b"]).retrieved_document_ids == ("a", "b")


def test_empty_ids_are_skipped():
    assert collapse(["", "a", "", "b"], 3) == ("a", "b")
    result = score_one(["", "t"])
    assert result.retrieved_document_ids == ("t",)
    assert result.hit_at(1) is True


def test_at_most_three_distinct_ids_are_kept():
    result = score_one(["a", "b", "c", "d", "e", "f"])
    assert result.retrieved_document_ids == ("a", "b", "c")


def test_empty_retrieval_on_a_labelled_question_misses_both():
    result = score_one([])
    assert result.retrieved_document_ids == ()
    assert (result.hit_at(1), result.hit_at(3)) == (False, False)


def test_empty_label_question_with_empty_retrieval_hits_both():
    result = score_one([], expected=())
    assert (result.hit_at(1), result.hit_at(3)) == (True, True)


def test_empty_label_question_with_only_empty_ids_counts_as_empty_retrieval():
    result = score_one(["", ""], expected=())
    assert (result.hit_at(1), result.hit_at(3)) == (True, True)


@pytest.mark.parametrize("ranking", [["a"], ["a", "b", "c"], ["x"] * 12])
def test_empty_label_question_with_any_retrieval_misses_both(ranking):
    result = score_one(ranking, expected=())
    assert (result.hit_at(1), result.hit_at(3)) == (False, False)


def test_every_question_is_asked_for_twelve_results():
    qs = question_set(question("q1"), question("q2", ()), question("q3", ("a", "b")))
    retriever = RankingRetriever({})
    run_question_set(qs, retriever, retry=NO_WAIT)
    assert [limit for _, limit in retriever.calls] == [12, 12, 12]
    assert [text for text, _ in retriever.calls] == [q.question for q in qs.questions]
    assert CutOffs().fetch_limit == 3 * OVERFETCH_MULTIPLIER == 12


class ChunkStore:
    """A chunk-grained store: one hit per chunk, ids `<document>_<n>`, mapped to documents by prefix."""

    identifier = "chunks"

    def __init__(self, chunk_ranking):
        self.chunk_ranking = chunk_ranking

    def retrieve(self, question, limit):
        return [document_id_from_chunk(chunk) for chunk in self.chunk_ranking[:limit]]


def test_chunk_grained_ranking_still_fills_three_distinct_documents():
    chunks = ["d1_0", "d1_1", "d1_2", "d2_0", "d2_1", "d3_0", "d3_1", "d4_0", "d5_0", "d6_0", "d7_0", "d8_0"]
    qs = question_set(question("q1", ("d3",)))
    run = run_question_set(qs, ChunkStore(chunks), retry=NO_WAIT)
    assert run.questions[0].retrieved_document_ids == ("d1", "d2", "d3")
    assert run.questions[0].hit_at(3) is True


def test_target_at_raw_rank_4_but_distinct_rank_3_is_a_top3_hit():
    result = score_one(["a", "a", "b", "t", "c"])
    assert result.retrieved_document_ids == ("a", "b", "t")
    assert (result.hit_at(1), result.hit_at(3)) == (False, True)


def test_chunk_prefix_maps_a_chunk_to_its_document():
    assert document_id_from_chunk("234_0") == "234"
    assert document_id_from_chunk("report_2024_7") == "report_2024"
    assert document_id_from_chunk("plain") == "plain"
    assert document_id_from_chunk("doc-3", separator="-") == "doc"


# --- aggregates and breakdowns ----------------------------------------------------------------


def test_an_empty_result_has_rates_zero_and_empty_breakdowns():
    run = RunResult(set_identifier="demo.set", retriever_identifier="fixed", questions=())
    assert run.hit_rate(1) == 0.0 and run.hit_rate(3) == 0.0
    assert run.by_form() == {} and run.by_hard_class() == {}
    assert run.latency_percentiles() == {}


def test_four_questions_give_one_half_top1_and_three_quarters_top3():
    qs = question_set(question("q1"), question("q2"), question("q3"), question("q4"))
    retriever = retriever_for({"q1": ["t"], "q2": ["t", "a"], "q3": ["a", "b", "t"], "q4": ["a", "b", "c"]}, qs)
    run = run_question_set(qs, retriever, retry=NO_WAIT)
    assert run.hit_rate(1) == 0.5
    assert run.hit_rate(3) == 0.75
    assert (run.hit_count(1), run.hit_count(3), run.question_count) == (2, 3, 4)


def test_rates_count_empty_label_questions_in_the_denominator():
    qs = question_set(question("q1"), question("none", ()))
    run = run_question_set(qs, retriever_for({"q1": ["t"], "none": ["a"]}, qs), retry=NO_WAIT)
    assert run.hit_rate(1) == 0.5


def test_breakdown_by_form_splits_match_and_gap_in_first_seen_order():
    qs = question_set(
        question("g1", form="gap"),
        question("m1", form="match"),
        question("g2", form="gap"),
        question("m2", form="match"),
    )
    retriever = retriever_for({"g1": ["a", "t"], "m1": ["t"], "g2": ["a", "b", "c"], "m2": ["t"]}, qs)
    by_form = run_question_set(qs, retriever, retry=NO_WAIT).by_form()
    assert list(by_form) == ["gap", "match"]
    assert by_form["gap"].as_dict() == {"questions": 2, "top1_hit_rate": 0.0, "top3_hit_rate": 0.5}
    assert by_form["match"].as_dict() == {"questions": 2, "top1_hit_rate": 1.0, "top3_hit_rate": 1.0}


def test_breakdown_by_form_lists_only_forms_that_occur():
    qs = question_set(question("m1", form="match"))
    assert list(run_question_set(qs, retriever_for({"m1": ["t"]}, qs), retry=NO_WAIT).by_form()) == ["match"]


def test_breakdown_by_hard_class_leaves_unclassified_questions_out():
    qs = question_set(
        question("n1", hard_class="near-duplicate"),
        question("u1"),
        question("p1", hard_class="prose-free"),
        question("n2", hard_class="near-duplicate"),
        question("u2"),
    )
    retriever = retriever_for({"n1": ["t"], "u1": ["t"], "p1": ["a"], "n2": ["a", "t"], "u2": ["t"]}, qs)
    by_class = run_question_set(qs, retriever, retry=NO_WAIT).by_hard_class()
    assert list(by_class) == ["near-duplicate", "prose-free"]
    assert by_class["near-duplicate"].as_dict() == {"questions": 2, "top1_hit_rate": 0.5, "top3_hit_rate": 1.0}
    assert by_class["prose-free"].as_dict() == {"questions": 1, "top1_hit_rate": 0.0, "top3_hit_rate": 0.0}
    assert sum(group.questions for group in by_class.values()) == 3


def test_summary_maps_pass_rate_to_top1_and_mean_score_to_top3():
    run = RunResult(
        set_identifier="demo.set",
        retriever_identifier="bm25.small",
        questions=(outcome("q1", "1"), outcome("q2", "3"), outcome("q3", "3"), outcome("q4", "-")),
    )
    summary = run.to_evaluation_summary()
    assert summary.grader == GRADER == "retrieval_hit_rate"
    assert summary.model == "bm25.small"
    assert summary.set_identifier == "demo.set"
    assert (summary.total, summary.passed) == (4, 1)
    assert summary.pass_rate == run.hit_rate(1) == 0.25
    assert summary.mean_score == run.hit_rate(3) == 0.75
    assert summary.question_outcomes == (("q1", True, 1.0), ("q2", False, 1.0), ("q3", False, 1.0), ("q4", False, 0.0))


def test_run_records_retriever_set_and_cutoffs():
    qs = question_set(question("q1"))
    run = run_question_set(qs, retriever_for({"q1": ["t"]}, qs, identifier="my.retriever"), retry=NO_WAIT)
    assert (run.set_identifier, run.retriever_identifier, run.grader, run.cutoffs) == ("demo.set", "my.retriever", GRADER, (1, 3))
    assert run.run_id.startswith(run.run_at.strftime("%Y%m%dT"))


def test_latency_is_measured_per_question_and_summarised_as_percentiles():
    qs = question_set(question("q1"), question("q2"))
    run = run_question_set(qs, retriever_for({"q1": ["t"], "q2": ["t"]}, qs), retry=NO_WAIT)
    assert all(q.latency_ms >= 0 for q in run.questions)
    assert set(run.latency_percentiles()) == {"p50", "p90", "p95", "p99", "max"}


def test_latency_percentiles_use_nearest_rank():
    questions = tuple(outcome(f"q{i}", "1", latency_ms=float(i)) for i in range(1, 11))
    run = RunResult(set_identifier="demo.set", retriever_identifier="fixed", questions=questions)
    assert run.latency_percentiles() == {"p50": 5.0, "p90": 9.0, "p95": 10.0, "p99": 10.0, "max": 10.0}


# --- configurable cut-offs --------------------------------------------------------------------


def test_deeper_cutoffs_ask_for_the_deepest_times_four():
    cutoffs = CutOffs((1, 3, 5, 10))
    assert cutoffs.fetch_limit == 40
    qs = question_set(question("q1"))
    ranking = [f"d{i}" for i in range(1, 9)] + ["t"] + [f"e{i}" for i in range(40)]
    retriever = retriever_for({"q1": ranking}, qs)
    run = run_question_set(qs, retriever, cutoffs=cutoffs, retry=NO_WAIT)
    assert retriever.calls[0][1] == 40
    assert run.cutoffs == (1, 3, 5, 10)
    assert len(run.questions[0].retrieved_document_ids) == 10
    assert [run.hit_rate(k) for k in (1, 3, 5, 10)] == [0.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize(
    "values",
    [(3, 5), (1, 5), (1,), (3, 1), (1, 3, 3), (0, 1, 3), (1, 3, -5), (1, 3, 2.5), (1, True, 3)],
    ids=["no-1", "no-3", "only-1", "unsorted", "repeated", "zero", "negative", "float", "bool"],
)
def test_cutoffs_without_1_and_3_or_out_of_order_are_refused(values):
    with pytest.raises(ValueError, match="cut-offs"):
        CutOffs(values)


def test_overfetch_multiplier_must_be_positive():
    with pytest.raises(ValueError, match="overfetch"):
        CutOffs((1, 3), overfetch_multiplier=0)


def test_is_hit_looks_only_at_the_first_k_distinct_ids():
    assert is_hit(("a", "t", "b"), ("t",), 1) is False
    assert is_hit(("a", "t", "b"), ("t",), 3) is True
    assert is_hit((), (), 1) is True
    assert is_hit(("a",), (), 3) is False
