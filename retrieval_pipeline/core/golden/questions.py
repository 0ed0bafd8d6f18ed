"""Golden questions and sets: immutable, validated on construction."""

from __future__ import annotations

import re
from functools import cached_property
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from retrieval_pipeline.core.base.errors import quoted
from retrieval_pipeline.core.golden.conversations import ConversationTurn, turn_problem
from retrieval_pipeline.core.golden.fingerprints import turn_contexts
from retrieval_pipeline.core.golden.forms import QuestionForm
from retrieval_pipeline.core.golden.generated import GeneratedProvenance

IDENTIFIER_PATTERN = r"^[a-z0-9_]+(\.[a-z0-9_]+)*$"

NonEmpty = Annotated[str, StringConstraints(min_length=1)]


def check_identifier(identifier: str, what: str = "identifier") -> str:
    """Identifiers end up in paths, partition keys and run keys, so they are kept to a safe alphabet."""
    if not isinstance(identifier, str) or not re.fullmatch(IDENTIFIER_PATTERN, identifier):
        raise ValueError(
            f"{what} {quoted(identifier)} must match {IDENTIFIER_PATTERN} "
            "(lower-case letters, digits and underscores, in dot-separated parts)"
        )
    return identifier


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=False)


class GoldenQuestion(_Frozen):
    """One labelled question; an empty `expected_document_ids` says no indexed document answers it.

    `hard_class` is free-form; the methodology's known classes are near-duplicate, specific-vs-general,
    prose-free, boilerplate and normal. `rejected_document_ids` are documents a person judged and found
    not to answer it: never scored as hits, they tell a miss on a judged document from a miss on one
    nobody looked at (judged@k, the verdict's unjudged count).
    """

    id: NonEmpty
    question: NonEmpty
    form: QuestionForm
    expected_document_ids: tuple[NonEmpty, ...]
    hard_class: NonEmpty | None = None
    answer_gist: str | None = None
    rejected_document_ids: tuple[NonEmpty, ...] = ()
    machine_expected_document_ids: tuple[NonEmpty, ...] = ()
    """A machine judge's yes (machine_labels.py): scored only under `labels: human+machine`."""
    machine_rejected_document_ids: tuple[NonEmpty, ...] = ()
    source_log: NonEmpty | None = None
    """The query log a question was drawn from (`coverage --sample`, then `judge --apply`); never scored."""
    source_traffic: int | None = Field(None, ge=0)
    """How many times the log held its query when it was drawn; never scored."""
    generated: GeneratedProvenance | None = None
    """Set for a question a generator wrote (`generate`, then `judge apply`): kept apart from the human
    questions' figures until the set records `generated_questions`; never in the fingerprint."""
    turn: ConversationTurn | None = None
    """Set for a turn of a conversation (conversations.py): `question` is then the utterance as typed."""

    @field_validator("id", "question", "hard_class")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator(
        "expected_document_ids", "rejected_document_ids", "machine_expected_document_ids", "machine_rejected_document_ids"
    )
    @classmethod
    def _distinct(cls, ids: tuple[str, ...], info) -> tuple[str, ...]:
        if len(set(ids)) == len(ids):  # the common case, at C speed; the loop names the repeat
            return ids
        seen: set[str] = set()
        for document_id in ids:
            if document_id in seen:
                raise ValueError(
                    f"duplicate {info.field_name.removesuffix('_document_ids').replace('_', ' ')} document id {quoted(document_id)}"
                )
            seen.add(document_id)
        return ids

    @field_validator("rejected_document_ids")
    @classmethod
    def _disjoint(cls, ids: tuple[str, ...], info) -> tuple[str, ...]:
        """A document cannot both answer a question and not answer it."""
        expected = set(info.data.get("expected_document_ids", ()))
        both = next((document_id for document_id in ids if document_id in expected), None)
        if both is not None:
            raise ValueError(f"{quoted(both)} is also an expected document id")
        return ids

    @field_validator("machine_expected_document_ids", "machine_rejected_document_ids")
    @classmethod
    def _human_wins(cls, ids: tuple[str, ...], info) -> tuple[str, ...]:
        """A document a person judged keeps the person's label; a machine cannot say both yes and no."""
        human = set(info.data.get("expected_document_ids", ())) | set(info.data.get("rejected_document_ids", ()))
        machine_yes = set(info.data.get("machine_expected_document_ids", ()))
        for document_id in ids:
            if document_id in human:
                raise ValueError(f"{quoted(document_id)} is judged by a person: a human label wins, drop it here")
            if info.field_name == "machine_rejected_document_ids" and document_id in machine_yes:
                raise ValueError(f"{quoted(document_id)} is also a machine expected document id")
        return ids

    @property
    def judged_document_ids(self) -> tuple[str, ...]:
        return self.expected_document_ids + self.rejected_document_ids


class MachineCalibration(_Frozen):
    """The calibration the machine labels were applied under: kappa (None: undefined) on n rows both
    judged, and whether `--force` applied them below the configured thresholds."""

    kappa: float | None
    n: int = Field(ge=0)
    forced: bool = False


class GeneratedQuestionsCounted(_Frozen):
    """Why a set's generated questions count in its verdicts: they ranked the configured retrievers as the
    human questions do (`validated`: every measure's tau interval reached `threshold` from below, its lower
    bounds in `tau_low`), or a person said so (`person`, named in `by`), whatever the figures."""

    because: Literal["validated", "person"]
    tau_low: dict[str, float | None]
    """Each measure's lower bound when it was recorded (None: no tau, a side tied every retriever)."""
    threshold: float
    questions: int = Field(ge=1)
    """How many generated questions the check measured."""
    by: NonEmpty | None = None
    at: NonEmpty

    @model_validator(mode="after")
    def _reason_holds(self) -> GeneratedQuestionsCounted:
        if self.because == "person" and self.by is None:
            raise ValueError("a person's decision names the person: set `by`")
        low = next((m for m, bound in self.tau_low.items() if bound is None or bound < self.threshold), None)
        if self.because == "validated" and (low is not None or not self.tau_low):
            raise ValueError(f"validated, yet the tau lower bound of {quoted(low)} is below {self.threshold:g}")
        return self


class GoldenQuestionSet(_Frozen):
    """A labelled set; labels only mean something against one concrete corpus."""

    identifier: str
    name: NonEmpty
    description: str = ""
    questions: tuple[GoldenQuestion, ...] = Field(min_length=1)
    machine_judged_by: NonEmpty | None = None
    """The judge (`name@fingerprint`) whose answers the questions' machine lists hold."""
    machine_calibration: MachineCalibration | None = None
    generated_questions: GeneratedQuestionsCounted | None = None
    """Set once the generated questions count in the verdicts (`validate-generated --accept`)."""

    @field_validator("identifier")
    @classmethod
    def _identifier(cls, identifier: str) -> str:
        return check_identifier(identifier, "set identifier")

    @model_validator(mode="after")
    def _unique_question_ids(self) -> GoldenQuestionSet:
        seen: set[str] = set()
        for question in self.questions:
            if question.id in seen:
                raise ValueError(f"duplicate question id {quoted(question.id)}")
            seen.add(question.id)
        problem = turn_problem(self.questions)
        if problem is not None:
            raise ValueError(problem)
        labelled = next(
            (q.id for q in self.questions if q.machine_expected_document_ids or q.machine_rejected_document_ids), None
        )
        if labelled is not None and self.machine_judged_by is None:
            raise ValueError(f"question {quoted(labelled)} has machine labels: machine_judged_by must name the judge")
        return self

    def question(self, question_id: str) -> GoldenQuestion:
        for question in self.questions:
            if question.id == question_id:
                return question
        raise KeyError(question_id)

    @cached_property
    def conversations(self) -> dict[str, tuple[GoldenQuestion, ...]]:
        """Each conversation's turns in order; empty for a set of single questions."""
        grouped: dict[str, list[GoldenQuestion]] = {}
        for question in self.questions:
            if question.turn is not None:
                grouped.setdefault(question.turn.conversation, []).append(question)
        return {conversation: tuple(turns) for conversation, turns in grouped.items()}

    def history(self, question: GoldenQuestion) -> tuple[GoldenQuestion, ...]:
        """The turns of the question's conversation before it, in order (none for a single question)."""
        if question.turn is None:
            return ()
        return self.conversations[question.turn.conversation][: question.turn.number - 1]

    def turn_context(self, question: GoldenQuestion) -> str | None:
        """What a query mode may read of a turn besides its utterance, for its fingerprint
        (fingerprints.turn_contexts); None for a single question."""
        return None if question.turn is None else self.turn_contexts[question.id]

    @cached_property
    def turn_contexts(self) -> dict[str, str]:
        """Built once per set: every run of it fingerprints every turn."""
        return turn_contexts(self.conversations.values())

    def counts_by_form(self) -> dict[str, int]:
        return _count(q.form.value for q in self.questions)

    def counts_by_hard_class(self) -> dict[str, int]:
        return _count(q.hard_class for q in self.questions if q.hard_class is not None)


def _count(keys) -> dict[str, int]:
    counts: dict[str, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    return counts
