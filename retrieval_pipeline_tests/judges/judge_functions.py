"""Judge functions a `callable` judge names (`judge_functions:NAME`): a team's own code, as a judge."""

from __future__ import annotations

import re
import sys

WORD = re.compile(r"\w+")


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def overlap_grade(question: str, document: str) -> int:
    """The share of the question's words the document holds, in quarters, capped at 3."""
    asked = words(question)
    return min(3, int(4 * len(asked & words(document)) / len(asked))) if asked else 0


def every_word(question: str, document: str) -> bool:
    """Yes when the document holds every word of the question: what stuffing fools."""
    return words(question) <= words(document)


def undecided(question: str, document: str) -> str:
    return "maybe"


def exits_at_question_5(question: str, document: str) -> int:
    """A function that ends the process on one row, as a script's error handling might."""
    if question == "question 5":
        sys.exit(2)
    return overlap_grade(question, document)
