"""Small builders and in-test retrievers shared by the core tests.

The retrievers here are real implementations of the retriever contract (an `identifier` and a
`retrieve(question, limit)`), not stand-ins for the code under test: the core must work with any of
them exactly as it works with a production retriever.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone

import pyarrow as pa

from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet
from retrieval_pipeline.core.scoring.measures import question_scores, ranking_figures
from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
from retrieval_pipeline.core.scoring.scoring import Relevance, collapsed


def question(
    question_id: str,
    expected: Iterable[str] = ("t",),
    *,
    form: str = "match",
    hard_class: str | None = None,
    text: str | None = None,
) -> GoldenQuestion:
    return GoldenQuestion(
        id=question_id,
        question=text or f"question {question_id}?",
        form=form,
        expected_document_ids=tuple(expected),
        hard_class=hard_class,
    )


def question_set(*questions: GoldenQuestion, identifier: str = "demo.set") -> GoldenQuestionSet:
    return GoldenQuestionSet(identifier=identifier, name="Demo set", description="test set", questions=questions)


class RankingRetriever:
    """Answers each question text with a fixed ranking and records every call it gets."""

    def __init__(self, rankings: Mapping[str, Sequence[str]], identifier: str = "fixed"):
        self.identifier = identifier
        self.rankings = dict(rankings)
        self.calls: list[tuple[str, int]] = []

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        self.calls.append((question, limit))
        return list(self.rankings.get(question, ()))[:limit]


def retriever_for(rankings_by_question_id: Mapping[str, Sequence[str]], questions: GoldenQuestionSet, identifier: str = "fixed"):
    """A RankingRetriever keyed by question id (translated to the question texts it will be asked)."""
    by_text = {questions.question(qid).question: ranking for qid, ranking in rankings_by_question_id.items()}
    return RankingRetriever(by_text, identifier)


# Outcome shorthands for hand-built runs: "1" = top-1 hit, "3" = top-3 hit only, "-" = miss at both,
# "E" = the retriever failed on the question.
def outcome(
    question_id: str,
    code: str,
    *,
    form: str = "match",
    hard_class: str | None = None,
    latency_ms: float = 1.0,
    fingerprint: str | None = None,
) -> QuestionResult:
    retrieved = {"1": ("t", "x", "y"), "3": ("x", "y", "t"), "-": ("x", "y", "z"), "E": ()}[code]
    return QuestionResult(
        question_id=question_id,
        form=form,
        hard_class=hard_class,
        expected_document_ids=("t",),
        retrieved_document_ids=retrieved,
        latency_ms=latency_ms,
        error="RuntimeError: down (after 3 attempts)" if code == "E" else None,
        fingerprint=fingerprint,
    )


def run_from_codes(
    codes: str,
    *,
    set_identifier: str = "demo.set",
    retriever_identifier: str = "fixed",
    run_at: datetime | None = None,
    forms: str | None = None,
    hard_classes: Sequence[str | None] | None = None,
) -> RunResult:
    """A run whose question i has outcome codes[i]; `forms` is a string of m/g per question."""
    questions = tuple(
        outcome(
            f"q{i + 1}",
            code,
            form=("gap" if forms and forms[i] == "g" else "match"),
            hard_class=hard_classes[i] if hard_classes else None,
        )
        for i, code in enumerate(codes)
    )
    kwargs = {"run_at": run_at} if run_at is not None else {}
    return RunResult(set_identifier=set_identifier, retriever_identifier=retriever_identifier, questions=questions, **kwargs)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)


# One question through the columnar scoring rules, for the rules' own tests.


def id_lists(*lists: Sequence[str]) -> pa.ListArray:
    return pa.array([list(ids) for ids in lists], pa.list_(pa.string()))


def collapse(ranking: Sequence[str], depth: int) -> tuple[str, ...]:
    return tuple(collapsed(id_lists(ranking), depth)[0].as_py())


def is_hit(retrieved: Sequence[str], expected: Sequence[str], k: int) -> bool:
    rank = int(Relevance.of(id_lists(retrieved), id_lists(expected)).first_hit_ranks()[0])
    return 0 < rank <= k


def metric(name: str, retrieved: Sequence[str], expected: Sequence[str], k: int) -> float:
    """`mrr`, `ndcg` or `recall` of one question at depth (or cut-off) k."""
    relevance = Relevance.of(id_lists(retrieved), id_lists(expected))
    return float(question_scores(relevance, (k,), ranking_figures((k,)))[f"{name}@{k}"][0])
