"""Merging a person's judgements into a set's labels: yes grows the expected ids, no the rejected ids.

Refused, naming the judging file's line: a judgement for a question the set lacks or has reworded since
the person read it, two answers for one (question, document) that disagree, an answer that contradicts
the set's own label (a yes for a rejected document, a no for an expected one), and a yes for a document
no known corpus holds (it would block every evaluation of the set). Nothing is merged when anything is
refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet


@dataclass(frozen=True)
class Judgement:
    question_id: str
    document_id: str
    relevant: bool
    where: str
    """The judging file and line it came from, for the error that refuses it."""
    question: str = ""
    """The question's text as the person read it; empty when the judging file does not hold it."""


@dataclass(frozen=True)
class LabelChange:
    question_id: str
    expected_added: tuple[str, ...]
    rejected_added: tuple[str, ...]
    was_empty: bool
    """The question expected nothing (nothing answers it) and a yes made it a normal question."""

    def line(self) -> str:
        parts = [
            f"+{len(ids)} {what} ({', '.join(ids)})"
            for what, ids in (("expected", self.expected_added), ("rejected", self.rejected_added))
            if ids
        ]
        note = "; was an empty-label question, now a normal one" if self.was_empty and self.expected_added else ""
        return f"{self.question_id}: {', '.join(parts)}{note}"


Labels = dict[str, tuple[tuple[str, ...], tuple[str, ...]]]
"""Question id to (expected ids, rejected ids)."""


def merged_labels(
    question_set: GoldenQuestionSet, judgements: Iterable[Judgement], corpora: Mapping[str, frozenset[str]]
) -> tuple[Labels, list[LabelChange]]:
    """Every changed question's new labels (new ids after the old, in judging order), and what changed,
    in set order. `corpora` (name to document ids) are those a yes must be in, as the label audit reads
    them: a document is unknown only when none of them holds it; with no corpora nothing is checked."""
    known = {question.id: question for question in question_set.questions}
    answers: dict[tuple[str, str], Judgement] = {}
    for judgement in judgements:
        question = asked(question_set, known, judgement)
        pair = (judgement.question_id, judgement.document_id)
        earlier = answers.setdefault(pair, judgement)
        if earlier.relevant != judgement.relevant:
            raise InvalidInputError(
                f"conflicting answers for question {quoted(pair[0])}, document {quoted(pair[1])}: also judged at {earlier.where}",
                source=judgement.where,
                field="judgement",
            )
        label = question.expected_document_ids if not judgement.relevant else question.rejected_document_ids
        if judgement.document_id in label:
            said = "expected" if not judgement.relevant else "rejected"
            raise InvalidInputError(
                f"conflicting answers for question {quoted(pair[0])}, document {quoted(pair[1])}: the set lists it as {said}",
                source=judgement.where,
                field="judgement",
            )
        if judgement.relevant:
            refuse_unknown_document(*pair, corpora, judgement.where)
    labels: Labels = {}
    changes = []
    for question in question_set.questions:
        mine = [j for (question_id, _), j in answers.items() if question_id == question.id]
        expected = tuple(j.document_id for j in mine if j.relevant and j.document_id not in question.expected_document_ids)
        rejected = tuple(j.document_id for j in mine if not j.relevant and j.document_id not in question.rejected_document_ids)
        if expected or rejected:
            labels[question.id] = (question.expected_document_ids + expected, question.rejected_document_ids + rejected)
            changes.append(LabelChange(question.id, expected, rejected, not question.expected_document_ids))
    return labels, changes


def refuse_unknown_document(question_id: str, document_id: str, corpora: Mapping[str, frozenset[str]], where: str) -> None:
    """A yes for a document none of `corpora` holds is refused, naming the file's line: as an expected id it
    would block every evaluation of the set. With no corpora nothing is checked."""
    if corpora and not any(document_id in ids for ids in corpora.values()):
        raise InvalidInputError(
            f"question {quoted(question_id)}: document {quoted(document_id)} is in no corpus of {', '.join(corpora)}",
            source=where,
            field="document_id",
        )


def asked(question_set: GoldenQuestionSet, known: Mapping[str, GoldenQuestion], judgement: Judgement) -> GoldenQuestion:
    """The question a judgement answers, as the set asks it today; refused when the set lacks it or
    has reworded it since the file was pooled (the answer was to another question)."""
    question = known.get(judgement.question_id)
    if question is None:
        raise InvalidInputError(
            f"question {quoted(judgement.question_id)} is not in set {quoted(question_set.identifier)}",
            source=judgement.where,
            field="question_id",
        )
    if judgement.question and _words(judgement.question) != _words(question.question):
        raise InvalidInputError(
            f"question {quoted(judgement.question_id)} was reworded since this file was pooled: "
            "pool it again and judge the new wording",
            source=judgement.where,
            field="question",
        )
    return question


def _words(text: str) -> str:
    """A spreadsheet may re-wrap or trim a cell: only the words and their order tell a rewording."""
    return " ".join(text.split())
