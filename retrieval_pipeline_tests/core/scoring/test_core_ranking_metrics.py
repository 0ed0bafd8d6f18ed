"""MRR, Recall@k and nDCG on the collapsed ranking, per question and aggregated like the hit rates."""

from __future__ import annotations

import math
from functools import partial

import pytest
from core_helpers import metric, outcome

from retrieval_pipeline.core.scoring.measures import ranking_figures
from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult

reciprocal_rank, recall, ndcg = (partial(metric, name) for name in ("mrr", "recall", "ndcg"))


def test_reciprocal_rank_is_one_over_the_first_relevant_rank_within_the_depth():
    assert reciprocal_rank(("x", "a", "b"), ("a", "b"), 10) == 0.5
    assert reciprocal_rank(("x", "y", "a"), ("a",), 2) == 0.0  # beyond the depth counts as not found


def test_recall_counts_every_expected_document_found_by_the_cutoff():
    assert recall(("a", "x", "b"), ("a", "b", "c", "d"), 1) == 0.25
    assert recall(("a", "x", "b"), ("a", "b", "c", "d"), 3) == 0.5


def test_ndcg_discounts_by_log_rank_over_the_ideal_order():
    got = ndcg(("x", "a", "b"), ("a", "b"), 10)
    ideal = 1 + 1 / math.log2(3)
    assert got == pytest.approx((1 / math.log2(3) + 1 / math.log2(4)) / ideal)
    assert ndcg(("a", "b"), ("a", "b"), 10) == 1.0


@pytest.mark.parametrize("name", ["mrr", "recall", "ndcg"])
def test_a_question_nothing_answers_scores_one_only_on_silence(name):
    assert metric(name, (), (), 10) == 1.0
    assert metric(name, ("x",), (), 10) == 0.0


def test_metrics_are_named_by_the_deepest_cutoff_and_recall_by_every_cutoff():
    assert tuple(f.key for f in ranking_figures((1, 3))) == (
        "mrr@3",
        "ndcg@3",
        "recall@1",
        "recall@3",
        "judged@1",
        "judged@3",
        "judged_any@1",
        "judged_any@3",
    )
    keys = tuple(f.key for f in ranking_figures((1, 3, 5, 10)))
    assert keys[:6] == ("mrr@10", "ndcg@10", "recall@1", "recall@3", "recall@5", "recall@10")


def test_run_metrics_average_over_all_questions_with_errors_counting_zero():
    run = RunResult(
        "demo.set",
        "fixed",
        (outcome("q1", "1"), outcome("q2", "3", form="gap"), outcome("q3", "E"), outcome("q4", "-", form="gap")),
    )
    assert run.question_metrics["q3"] is None
    assert run.question_metrics["q2"]["mrr@3"] == pytest.approx(1 / 3)
    assert run.metrics()["mrr@3"] == pytest.approx((1 + 1 / 3) / 4)
    assert run.metrics()["recall@1"] == 0.25
    assert run.metrics_by_form() == {
        "match": pytest.approx(
            {"mrr@3": 0.5, "ndcg@3": 0.5, "recall@1": 0.5, "recall@3": 0.5, "judged@1": 0.5, "judged@3": 1 / 6}
            | {"judged_any@1": 0.5, "judged_any@3": 1 / 6}  # no machine labels: the same as judged@k
        ),
        "gap": pytest.approx(
            {"mrr@3": 1 / 6, "ndcg@3": 0.25, "recall@1": 0.0, "recall@3": 0.5, "judged@1": 0.0, "judged@3": 1 / 6}
            | {"judged_any@1": 0.0, "judged_any@3": 1 / 6}
        ),
    }


def test_an_empty_label_question_is_scored_like_its_hit():
    silent = QuestionResult("q1", "gap", None, (), (), 1.0)
    noisy = QuestionResult("q2", "gap", None, (), ("x",), 1.0)
    rejected = QuestionResult("q3", "gap", None, (), ("x",), 1.0, rejected_document_ids=("x",))
    run = RunResult("demo.set", "fixed", (silent, noisy, rejected))
    scored = {"mrr@3", "ndcg@3", "recall@1", "recall@3"}
    assert {key: {k: v for k, v in m.items() if k in scored} for key, m in run.question_metrics.items()} == {
        "q1": {"mrr@3": 1.0, "ndcg@3": 1.0, "recall@1": 1.0, "recall@3": 1.0},
        "q2": {"mrr@3": 0.0, "ndcg@3": 0.0, "recall@1": 0.0, "recall@3": 0.0},
        "q3": {"mrr@3": 0.0, "ndcg@3": 0.0, "recall@1": 0.0, "recall@3": 0.0},
    }
    # judged@k reads the ranking as it is: nothing shown is nothing unjudged; a rejected document is judged
    assert [run.question_metrics[q]["judged@3"] for q in ("q1", "q2", "q3")] == [1.0, 0.0, 1.0]
    assert (silent.hit_at(1), noisy.hit_at(1)) == (True, False)
