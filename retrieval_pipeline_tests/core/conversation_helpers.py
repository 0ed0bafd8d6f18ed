"""Conversational sets and their runs, written as outcome codes per turn, for the figures by turn.

A run is made the way `run` makes it: the set's questions asked of a real retriever (core_helpers'
RankingRetriever answers each turn's text with a fixed ranking), so the turn columns come from the
runner, not from the test.
"""

from __future__ import annotations

from collections.abc import Mapping

from core_helpers import RankingRetriever

from retrieval_pipeline.core.golden.conversations import ConversationTurn
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet
from retrieval_pipeline.core.retrieval.query_modes import QueryMode, QueryPlan
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.services.evaluation.runner import run_question_set

RANKINGS = {"1": ("t", "x", "y"), "3": ("x", "y", "t"), "-": ("x", "y", "z")}
"""Outcome codes: "1" a top-1 hit, "3" a top-3 hit only, "-" a miss at both."""


def conversation_set(shape: Mapping[str, int], singles: int = 0, identifier: str = "demo.conversations") -> GoldenQuestionSet:
    """`shape`: each conversation's number of turns; `singles` single questions after them."""
    questions = [
        GoldenQuestion(
            id=f"{conversation}/{number}",
            question=f"{conversation} turn {number}?",
            form="match",
            expected_document_ids=("t",),
            turn=ConversationTurn(conversation=conversation, number=number, rewrite=f"standalone {conversation} {number}?"),
        )
        for conversation, turns in shape.items()
        for number in range(1, turns + 1)
    ]
    questions += [
        GoldenQuestion(id=f"q{index}", question=f"single {index}?", form="gap", expected_document_ids=("t",))
        for index in range(1, singles + 1)
    ]
    return GoldenQuestionSet(identifier=identifier, name="Conversations", description="test set", questions=tuple(questions))


def conversation_run(
    codes: Mapping[str, str],
    singles: str = "",
    retriever: str = "bm25_current",
    *,
    rewrite: bool = False,
    setup: str = "sha256:bm25",
) -> RunResult:
    """`codes`: each conversation's outcome per turn, in turn order; `singles`: the single questions'
    outcomes. With `rewrite`, the run asks the set's rewrites (query mode `rewrite`), and the outcomes
    are those of the rewrites; `setup` stands for the retriever's kind and parameters."""
    question_set = conversation_set({conversation: len(turns) for conversation, turns in codes.items()}, len(singles))
    outcomes = [code for turns in codes.values() for code in turns] + list(singles)
    rankings = {
        (question.turn.rewrite if rewrite and question.turn else question.question): RANKINGS[code]
        for question, code in zip(question_set.questions, outcomes)
    }
    plan = QueryPlan(QueryMode("rewrite") if rewrite else QueryMode(), setup=setup)
    return run_question_set(question_set, RankingRetriever(rankings, retriever), queries=plan)
