"""Each question's outcome in words, and the order a reviewer reads questions in: the HTML report and the
Dagster preview list the same questions first, named the same way."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.results import QuestionResult

READING_ORDER = {"error": 0, "miss": 1, **{f"{figure.title} hit": 2 + order for order, figure in enumerate(reversed(TESTED))}}
"""Errors, misses, then hits at each tested rate from the deepest ("top-3 hit") to the first ("top-1 hit")."""
READING_ORDER_TEXT = f"errors first, {', '.join(f'then {figure.title} misses' for figure in reversed(TESTED))}, then hits"
"""The order in words, as the Dagster preview names it."""
OUTCOMES_TEXT = f"{', '.join(f'{figure.title} hit' for figure in TESTED)}, miss, or the retriever's error"


def outcome(question: QuestionResult) -> str:
    if question.error is not None:
        return "error"
    return next((f"{figure.title} hit" for figure in TESTED if question.hit_at(figure.k)), "miss")


def misses_first(questions: Sequence[QuestionResult]) -> list[QuestionResult]:
    """Errors, then top-3 misses, then top-1 misses, then hits; the set's order inside each."""
    return sorted(questions, key=lambda question: READING_ORDER[outcome(question)])
