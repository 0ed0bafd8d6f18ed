"""Golden conversations: a set's multi-turn questions, each turn a question of the set.

A user's third message ("and at supersonic speeds?") cannot be retrieved for without the first two, so a
turn keeps its place: its conversation and its number (1 for the opening message). Everything that works
on questions works on turns because a turn is a `GoldenQuestion` whose `turn` is set, with the id
`<conversation>/<number>`; what came before it is read from the set (`GoldenQuestionSet.history`).

A set file writes turns grouped under `conversations:` (conversation_files.py); this module holds what a
turn is and the rules a set's turns obey wherever they came from.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Protocol

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from retrieval_pipeline.core.base.errors import quoted

TURN_SEPARATOR = "/"
DEPTHS = ("1", "2", "3", "4+")
"""The turn depths figures are reported by: the fourth turn and later ones are pooled, as few
conversations run that long and a rate over a handful of turns says little."""

_Text = Annotated[str, StringConstraints(min_length=1)]


class ConversationTurn(BaseModel):
    """Where a question sits in its conversation, and what the set says of it beyond the utterance (the
    question's text, as the user typed it): the assistant's reply that followed, and a standalone rewrite
    (the turn as a self-contained question; TREC CAsT's manual rewrite), each optional."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    conversation: _Text
    number: int = Field(ge=1)
    reply: _Text | None = None
    rewrite: _Text | None = None

    @field_validator("conversation")
    @classmethod
    def _no_separator(cls, conversation: str) -> str:
        if TURN_SEPARATOR in conversation or not conversation.strip():
            raise ValueError(f"a conversation id is not blank and holds no {TURN_SEPARATOR!r}: {quoted(conversation)}")
        return conversation

    @property
    def question_id(self) -> str:
        return turn_id(self.conversation, self.number)

    @property
    def depth(self) -> str:
        return depth_of(self.number)


def turn_id(conversation: str, number: int) -> str:
    return f"{conversation}{TURN_SEPARATOR}{number}"


def depth_of(number: int) -> str:
    return DEPTHS[min(number, len(DEPTHS)) - 1]


class _Question(Protocol):
    """A golden question as this module reads it (questions.py imports this module, not the reverse)."""

    id: str
    turn: ConversationTurn | None


def turn_problem(questions: Iterable[_Question]) -> str | None:
    """Why a set's turns do not form conversations (None: they do). A conversation's turns are numbered
    1, 2, 3, ... in the order they come, none missing or repeated, and each turn's id is
    `<conversation>/<number>`, so a turn's history is exactly the turns before it."""
    last: dict[str, int] = {}
    for question in questions:
        turn = question.turn
        if turn is None:
            continue
        if question.id != turn.question_id:
            return f"turn {quoted(question.id)} must have the id {quoted(turn.question_id)} (conversation/turn)"
        previous = last.get(turn.conversation, 0)
        if turn.number == previous:
            return f"conversation {quoted(turn.conversation)}: duplicate turn {turn.number}"
        if turn.number != previous + 1:
            return f"conversation {quoted(turn.conversation)}: turn {turn.number} comes after turn {previous} (turns are numbered 1, 2, 3, ... in order)"
        last[turn.conversation] = turn.number
    return None
