"""Retrievers side by side on one set: group rates, disagreements and paired significance tests."""

from __future__ import annotations

import pytest
from core_helpers import run_from_codes

from retrieval_pipeline.core.comparison import compare_runs
from retrieval_pipeline.core.errors import InvalidInputError

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


def test_group_rates_are_shown_per_run_with_gaps_where_a_group_is_absent():
    first = run_from_codes("1-13", retriever_identifier="a", hard_classes=CLASSES, forms="mgmg")
    second = run_from_codes("1111", retriever_identifier="b", hard_classes=[None, None, "prose-free", "boilerplate"], forms="mgmg")
    comparison = compare_runs([first, second])
    assert [g.key for g in comparison.by_form] == ["match", "gap"]
    by_class = {g.key: g.rates for g in comparison.by_hard_class}
    assert list(by_class) == ["near-duplicate", "prose-free", "boilerplate"]
    assert by_class["near-duplicate"][0].top1_hit_rate == 0.5 and by_class["near-duplicate"][1] is None
    assert by_class["boilerplate"][0] is None and by_class["boilerplate"][1].top1_hit_rate == 1.0


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        ([run_from_codes("1", retriever_identifier="a")], "at least two"),
        ([run_from_codes("1", retriever_identifier="a"), run_from_codes("-", retriever_identifier="a")], "more than once"),
        (
            [run_from_codes("1", retriever_identifier="a"), run_from_codes("1", retriever_identifier="b", set_identifier="other.set")],
            "different sets",
        ),
        ([run_from_codes("11", retriever_identifier="a"), run_from_codes("1", retriever_identifier="b")], "different questions"),
    ],
    ids=["one-run", "same-retriever", "different-sets", "different-questions"],
)
def test_runs_that_cannot_be_compared_are_refused(runs, message):
    with pytest.raises(InvalidInputError, match=message):
        compare_runs(runs)
