"""Pooling the retrievers' unjudged documents against the set's labels as they are today."""

from __future__ import annotations

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet
from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
from retrieval_pipeline.core.services.labels.pooling import TEXT_SHOWN, pool, with_texts

GOLDEN = GoldenQuestionSet(
    identifier="desk.small",
    name="Desk",
    questions=(
        GoldenQuestion(id="q1", question="reset?", form="match", expected_document_ids=("d1",), rejected_document_ids=("r1",)),
        GoldenQuestion(id="q2", question="invoices?", form="gap", expected_document_ids=()),
    ),
)


def run(retriever: str, rankings: dict[str, tuple[str, ...] | None]) -> RunResult:
    """None: the retriever failed on that question."""
    return RunResult(
        "desk.small",
        retriever,
        tuple(
            QuestionResult(question_id, "gap", None, ("d1",), ranking or (), 1.0, "down" if ranking is None else None)
            for question_id, ranking in rankings.items()
        ),
    )


def test_each_unjudged_document_is_pooled_once_with_every_ranking_of_it_best_rank_first():
    dense = run("dense", {"q1": ("x", "d1", "y", "z"), "q2": ("w",)})
    bm25 = run("bm25", {"q1": ("y", "r1", "x"), "q2": None, "gone": ("v",)})  # an error, a question since removed

    candidates = pool(GOLDEN, [dense, bm25], depth=3)

    assert [(c.question_id, c.document_id, c.ranked_by) for c in candidates] == [
        ("q1", "x", (("dense", 1), ("bm25", 3))),
        ("q1", "y", (("dense", 3), ("bm25", 1))),
        ("q2", "w", (("dense", 1),)),
    ]
    assert (candidates[0].question, candidates[0].expected_document_ids, candidates[0].rejected_document_ids) == (
        "reset?",
        ("d1",),
        ("r1",),
    )


def test_texts_are_cut_and_the_labelled_title_comes_with_each_candidate():
    [candidate] = pool(GOLDEN, [run("dense", {"q1": ("x",)})], depth=1)
    asked = []

    def texts(wanted):
        asked.append(wanted)
        return {"x": ("Recovery", "a" * 900), "d1": ("Reset page", "")}

    [shown] = with_texts([candidate], texts)

    assert asked == [{"x", "d1"}]
    assert (shown.title, shown.text, shown.expected_title) == ("Recovery", "a" * TEXT_SHOWN, "Reset page")


def test_a_depth_below_one_is_refused():
    with pytest.raises(InvalidInputError, match="depth must be at least 1"):
        pool(GOLDEN, [], depth=0)
