"""Which labels score: the people's alone (`human`, the default) or theirs grown by a machine judge's
(`human+machine`).

A machine judge's answers live in their own fields of a set (`machine_expected_document_ids`,
`machine_rejected_document_ids`, with `machine_judged_by`), never in the human lists, so nothing a
machine said can pass for a person's label, and the question fingerprints (which cover the human lists
only) stay as they were: stored runs under `human` stay comparable. Under `human+machine` each question
is scored as if the machine's answers were labels; its fingerprint then covers them, so a run stored
under the other choice is rescored (never silently compared) like any relabelled run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.golden.judgements import Labels
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet

HUMAN, HUMAN_AND_MACHINE = "human", "human+machine"
LABEL_CHOICES = (HUMAN, HUMAN_AND_MACHINE)


def check_labels(labels: str) -> str:
    if labels not in LABEL_CHOICES:
        raise InvalidInputError(f"{quoted(labels)} is not a label choice; use {' or '.join(LABEL_CHOICES)}", field="labels")
    return labels


def scored_under(question_set: GoldenQuestionSet, labels: str) -> GoldenQuestionSet:
    """The set whose expected and rejected ids score under `labels`: as it is for `human`; for
    `human+machine` each question's machine lists appended to its human ones (and kept as they are, so a
    run still tells which documents a machine judged: judged@k counts people only). Not validated again:
    it is a scoring view, never written."""
    if check_labels(labels) == HUMAN:
        return question_set
    questions = tuple(
        question.model_copy(
            update={
                "expected_document_ids": _joined(question.expected_document_ids, question.machine_expected_document_ids),
                "rejected_document_ids": _joined(question.rejected_document_ids, question.machine_rejected_document_ids),
            }
        )
        for question in question_set.questions
    )
    return question_set.model_copy(update={"questions": questions})


def _joined(human: tuple[str, ...], machine: tuple[str, ...]) -> tuple[str, ...]:
    """Idempotent: a set already scored under human+machine labels scores the same when asked again."""
    return human + tuple(document_id for document_id in machine if document_id not in human)


def with_answers(question_set: GoldenQuestionSet, answers: Mapping[tuple[str, str], bool], machine: bool) -> GoldenQuestionSet:
    """The set with (question id, document id) -> yes answers added to its human lists, or with `machine`
    to its machine lists; a document a person already judged keeps that label (a person's label wins),
    and so does one a machine already judged."""
    questions = []
    for question in question_set.questions:
        taken = set(question.judged_document_ids) | set(question.machine_expected_document_ids)
        taken |= set(question.machine_rejected_document_ids)
        mine = [(document_id, yes) for (question_id, document_id), yes in answers.items() if question_id == question.id]
        yes = tuple(document_id for document_id, relevant in mine if relevant and document_id not in taken)
        no = tuple(document_id for document_id, relevant in mine if not relevant and document_id not in taken)
        prefix = "machine_" if machine else ""
        expected, rejected = f"{prefix}expected_document_ids", f"{prefix}rejected_document_ids"
        questions.append(
            question.model_copy(update={expected: getattr(question, expected) + yes, rejected: getattr(question, rejected) + no})
        )
    return question_set.model_copy(update={"questions": tuple(questions)})


@dataclass(frozen=True)
class MachineChange:
    question_id: str
    expected_added: tuple[str, ...]
    rejected_added: tuple[str, ...]
    dropped: tuple[str, ...]
    """Machine-judged documents a person has judged since: the person's label wins."""

    def line(self) -> str:
        parts = [
            f"+{len(ids)} machine {what} ({', '.join(ids)})"
            for what, ids in (("expected", self.expected_added), ("rejected", self.rejected_added))
            if ids
        ]
        if self.dropped:
            parts.append(f"-{len(self.dropped)} machine (judged by a person now: {', '.join(self.dropped)})")
        return f"{self.question_id}: {', '.join(parts)}"


def machine_merged(
    question_set: GoldenQuestionSet, human: Labels, answers: Mapping[tuple[str, str], bool]
) -> tuple[Labels, list[MachineChange]]:
    """Each changed question's new machine lists: today's, less the documents a person judges now (in
    `human`, the new human lists, or the set's), with the machine's (question id, document id) -> yes
    answers for documents no person judged (a newer answer for a document replaces the older one)."""
    labels: Labels = {}
    changes = []
    for question in question_set.questions:
        expected, rejected = human.get(question.id, (question.expected_document_ids, question.rejected_document_ids))
        judged = set(expected) | set(rejected)
        mine = {document: yes for (question_id, document), yes in answers.items() if question_id == question.id}
        kept_yes = [d for d in question.machine_expected_document_ids if d not in judged and mine.get(d, True)]
        kept_no = [d for d in question.machine_rejected_document_ids if d not in judged and not mine.get(d, False)]
        added_yes = tuple(d for d, yes in mine.items() if yes and d not in judged and d not in kept_yes)
        added_no = tuple(d for d, yes in mine.items() if not yes and d not in judged and d not in kept_no)
        dropped = tuple(d for d in question.machine_expected_document_ids + question.machine_rejected_document_ids if d in judged)
        if added_yes or added_no or dropped:
            labels[question.id] = (tuple(kept_yes) + added_yes, tuple(kept_no) + added_no)
            changes.append(MachineChange(question.id, added_yes, added_no, dropped))
    return labels, changes
