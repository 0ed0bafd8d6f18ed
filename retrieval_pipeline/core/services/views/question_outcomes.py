"""Each question's outcome in words, and the order a reviewer reads questions in: the HTML report and the
Dagster preview list the same questions first, named the same way."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_pipeline.core.base.formatting import id_list, shortened
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.results import QuestionResult

READING_ORDER = {"error": 0, "miss": 1, **{f"{figure.title} hit": 2 + order for order, figure in enumerate(reversed(TESTED))}}
"""Errors, misses, then hits at each tested rate from the deepest ("top-3 hit") to the first ("top-1 hit")."""
READING_ORDER_TEXT = f"errors first, {', '.join(f'then {figure.title} misses' for figure in reversed(TESTED))}, then hits"
"""The order in words, as the Dagster preview names it."""
PREVIEW_ROWS = 20
PREVIEW_IDS = 3
ID_WIDTH = 18
OUTCOMES_TEXT = f"{', '.join(f'{figure.title} hit' for figure in TESTED)}, miss, or the retriever's error"


def outcome(question: QuestionResult) -> str:
    if question.error is not None:
        return "error"
    return next((f"{figure.title} hit" for figure in TESTED if question.hit_at(figure.k)), "miss")


def misses_first(questions: Sequence[QuestionResult]) -> list[QuestionResult]:
    """Errors, then top-3 misses, then top-1 misses, then hits; the set's order inside each."""
    return sorted(questions, key=lambda question: READING_ORDER[outcome(question)])


def preview_rows(questions: Sequence[QuestionResult], depth: int) -> list[dict[str, str]]:
    """The first rows a reviewer wants, in the reading order. Ids are cut short and lists capped so the
    table fits a page; the stored result has them whole."""
    return [
        {
            "question": shortened(q.question_id, ID_WIDTH),
            "outcome": outcome(q) if q.error is None else f"error: {shortened(q.error, ID_WIDTH)}",
            "form": q.form,
            "class": q.hard_class,
            "expected": id_list(q.expected_document_ids, PREVIEW_IDS, ID_WIDTH) if q.expected_document_ids else "(none)",
            "retrieved": id_list(q.retrieved_document_ids, PREVIEW_IDS, ID_WIDTH),
            "unjudged": id_list(q.unjudged_document_ids(depth), PREVIEW_IDS, ID_WIDTH),
        }
        for q in misses_first(questions)[:PREVIEW_ROWS]
    ]
