"""Each question's outcome in words, and the order a reviewer reads questions in: the HTML report and the
Dagster preview list the same questions first, named the same way."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_pipeline.core.scoring.results import QuestionResult

READING_ORDER = {"error": 0, "miss": 1, "top-3 hit": 2, "top-1 hit": 3}


def outcome(question: QuestionResult) -> str:
    if question.error is not None:
        return "error"
    return "top-1 hit" if question.top1_hit else "top-3 hit" if question.top3_hit else "miss"


def misses_first(questions: Sequence[QuestionResult]) -> list[QuestionResult]:
    """Errors, then top-3 misses, then top-1 misses, then hits; the set's order inside each."""
    return sorted(questions, key=lambda question: READING_ORDER[outcome(question)])
