"""Retrievers side by side on one set: group rates, disagreements and paired significance tests."""

from __future__ import annotations

import pytest
from core_helpers import run_from_codes

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.scoring.checks.comparison import compare_runs

CLASSES = ["near-duplicate", None, "prose-free", "near-duplicate"]


def test_the_first_run_is_the_reference_and_every_other_is_tested_against_it():
    lexical = run_from_codes("1111", retriever_identifier="lexical")
    vector = run_from_codes("13--", retriever_identifier="vector")
    hybrid = run_from_codes("1113", retriever_identifier="hybrid")
    comparison = compare_runs([lexical, vector, hybrid])
    assert comparison.reference is lexical
    assert comparison.retriever_identifiers == ("lexical", "vector", "hybrid")
    assert comparison.test("lexical", 1) is None
    top1 = comparison.test("vector", 1)
    assert (top1.first_only, top1.second_only) == (3, 0)
    assert top1.delta == pytest.approx(-0.75)
    assert top1.p_value == pytest.approx(0.25)  # 2 * (1/2)**3
    top3 = comparison.test("vector", 3)
    assert (top3.first_only, top3.second_only, top3.delta) == (2, 0, -0.5)
    assert comparison.test("hybrid", 3).p_value == 1.0


def test_disagreements_list_the_questions_the_runs_score_differently_in_set_order():
    first = run_from_codes("13-1", retriever_identifier="a")
    second = run_from_codes("11-E", retriever_identifier="b")
    comparison = compare_runs([first, second])
    assert [d.question_id for d in comparison.disagreements] == ["q2", "q4"]
    q2, q4 = comparison.disagreements
    assert q2.hits(1) == (False, True) and q2.hits(3) == (True, True)
    assert q4.hits(1) == (True, None)  # an error disagrees with a hit, but is neither hit nor miss
    assert comparison.test("b", 1).first_only == 0  # errored questions are left out of the test


def test_questions_relabelled_between_stored_runs_are_left_out_of_every_figure_and_reported():
    first = run_from_codes("1-13", retriever_identifier="a", hard_classes=CLASSES, forms="mgmg")
    second = run_from_codes(
        "1111", retriever_identifier="b", hard_classes=[None, None, "prose-free", "boilerplate"], forms="mgmg"
    )
    comparison = compare_runs([first, second])
    assert [q.question_id for q in comparison.reference.questions] == ["q2", "q3"]
    assert comparison.set_changes[0].relabelled == ("q1", "q4")
    assert comparison.set_changes[0].compared == 2
    by_class = {g.key: g.rates for g in comparison.by_hard_class}
    assert list(by_class) == ["prose-free"]
    assert [rates.hit_rate(1) for rates in by_class["prose-free"]] == [1.0, 1.0]
    assert comparison.test("b", 1).delta == 0.5


def test_a_question_only_one_run_has_is_reported_as_added_and_not_compared():
    first = run_from_codes("11", retriever_identifier="a")
    second = run_from_codes("1--", retriever_identifier="b")
    comparison = compare_runs([first, second])
    assert comparison.set_changes[0].added == ("q3",)
    assert [run.question_count for run in comparison.runs] == [2, 2]
    assert [d.question_id for d in comparison.disagreements] == ["q2"]


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        ([run_from_codes("1", retriever_identifier="a")], "at least two"),
        ([run_from_codes("1", retriever_identifier="a"), run_from_codes("-", retriever_identifier="a")], "more than once"),
        (
            [
                run_from_codes("1", retriever_identifier="a"),
                run_from_codes("1", retriever_identifier="b", set_identifier="other.set"),
            ],
            "different sets",
        ),
        (
            [
                run_from_codes("1", retriever_identifier="a"),
                run_from_codes("1", retriever_identifier="b", hard_classes=["boilerplate"]),
            ],
            "not comparable: the runs share only 0 unchanged question",
        ),
    ],
    ids=["one-run", "same-retriever", "different-sets", "no-unchanged-question"],
)
def test_runs_that_cannot_be_compared_are_refused(runs, message):
    with pytest.raises(InvalidInputError, match=message):
        compare_runs(runs)
