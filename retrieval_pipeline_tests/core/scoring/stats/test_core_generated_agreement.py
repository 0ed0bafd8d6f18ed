"""Generated questions gate only once they rank the retrievers as the human questions do."""

from __future__ import annotations

import pytest

from retrieval_pipeline.core.scoring.stats.generated_agreement import measure_agreement


def _hits(rate: float, questions: int) -> list[float]:
    """`questions` 0/1 scores, the first `rate` of them hits."""
    return [1.0 if i < round(rate * questions) else 0.0 for i in range(questions)]


def test_generated_questions_that_order_well_separated_retrievers_alike_reach_the_threshold():
    human = {"bm25": _hits(0.5, 200), "dense": _hits(0.8, 200), "titles": _hits(0.2, 200)}
    generated = {"bm25": _hits(0.6, 150), "dense": _hits(0.9, 150), "titles": _hits(0.3, 150)}
    agreement = measure_agreement("top1", human, generated)
    assert agreement.tau == 1.0
    assert agreement.interval == (1.0, 1.0)
    assert agreement.reaches(0.8)
    assert agreement.differences == pytest.approx({"bm25": 0.1, "dense": 0.1, "titles": 0.1})


def test_a_reversed_ranking_is_a_negative_tau_and_never_gates():
    human = {"a": _hits(0.2, 100), "b": _hits(0.5, 100), "c": _hits(0.8, 100)}
    generated = {"a": _hits(0.8, 100), "b": _hits(0.5, 100), "c": _hits(0.2, 100)}
    agreement = measure_agreement("top3", human, generated)
    assert agreement.tau == -1.0
    assert agreement.interval[1] < 0
    assert not agreement.reaches(0.8)


def test_too_few_generated_questions_cannot_pass_by_luck_even_when_they_order_the_retrievers_alike():
    human = {"a": _hits(0.3, 300), "b": _hits(0.5, 300), "c": _hits(0.7, 300)}
    generated = {"a": [0.0, 0.0, 1.0], "b": [0.0, 1.0, 1.0], "c": [1.0, 1.0, 1.0]}
    agreement = measure_agreement("top1", human, generated)
    assert agreement.tau == 1.0
    assert agreement.interval[0] < 0.8
    assert not agreement.reaches(0.8)


def test_the_interval_is_the_same_every_time_it_is_computed():
    human = {"a": _hits(0.4, 50), "b": _hits(0.5, 50), "c": _hits(0.45, 50)}
    generated = {"a": _hits(0.35, 40), "b": _hits(0.55, 40), "c": _hits(0.5, 40)}
    assert measure_agreement("ndcg@10", human, generated) == measure_agreement("ndcg@10", human, generated)


def test_retrievers_scored_on_one_side_only_are_refused_by_name():
    with pytest.raises(ValueError, match=r"generated questions score other retrievers: \['c'\]"):
        measure_agreement("top1", {"a": [1.0], "b": [0.0]}, {"a": [1.0], "b": [0.0], "c": [1.0]})


def test_a_side_without_questions_is_refused():
    with pytest.raises(ValueError, match="same generated questions, at least one"):
        measure_agreement("top1", {"a": [1.0], "b": [0.0]}, {"a": [], "b": []})
