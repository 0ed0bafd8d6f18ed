"""How a retriever asks a conversation's turns: the query modes of a retriever's `conversation:` key.

A user's third message ("and at supersonic speeds?") is not a search query on its own, and teams make one
of it in different ways; each mode measures one:

- `current` (the default): the utterance as typed, today's behaviour, what a retriever blind to the
  conversation gets;
- `{history: N}` / `{history: all}`: the last N user turns before it (or all of them) and the turn itself,
  one per line, oldest first; `replies: true` puts the assistant's replies the set records after their turns;
- `rewrite`: the set's standalone rewrite of the turn, an oracle, which separates how well a retriever
  finds a turn's documents from how well the turn is rewritten;
- `{rewriter: NAME}`: the rewrite a rewriter of the `rewriters:` section makes (rewriters.py).

A single question (not a turn) is always asked as it is, whatever the mode, and so is an opening turn
that has no rewrite: nothing came before it to resolve. A later turn without a rewrite cannot be asked
by its rewrite: `rewrite` refuses the set before anything is asked, naming the first such turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet, check_identifier
from retrieval_pipeline.core.retrieval.rewriters import Rewriter

TURN_JOINER = "\n"
MODES_TEXT = "current, rewrite, {history: N}, {history: all} (each with `replies: true` or not) or {rewriter: NAME}"


@dataclass(frozen=True)
class QueryMode:
    """One retriever's mode; `turns` is N of `history: N` (None: all), `rewriter` the rewriter's name."""

    name: Literal["current", "history", "rewrite", "rewriter"] = "current"
    turns: int | None = None
    replies: bool = False
    rewriter: str | None = None

    @property
    def label(self) -> str:
        """The mode as a run records it (`query_mode`): `current`, `history:2`, `history:all+replies`,
        `rewrite`, `rewriter:NAME`."""
        if self.name == "history":
            return f"history:{self.turns or 'all'}{'+replies' if self.replies else ''}"
        if self.name == "rewriter":
            return f"rewriter:{self.rewriter}"
        return self.name


CURRENT = QueryMode()


def query_mode(raw: Any) -> QueryMode:
    """A `conversation:` value as a mode; ValueError saying what the key takes (the configuration's schema
    names the retriever and the key)."""
    if raw is None or raw == "current":
        return CURRENT
    if raw == "rewrite":
        return QueryMode("rewrite")
    if isinstance(raw, Mapping) and set(raw) == {"rewriter"} and isinstance(raw["rewriter"], str):
        return QueryMode("rewriter", rewriter=check_identifier(raw["rewriter"], "rewriter name"))
    if isinstance(raw, Mapping) and "history" in raw and set(raw) <= {"history", "replies"}:
        turns, replies = raw["history"], raw.get("replies", False)
        counted = isinstance(turns, int) and not isinstance(turns, bool) and turns >= 1
        if not (counted or turns == "all") or not isinstance(replies, bool):
            raise ValueError(f"history is a number of turns from 1 or `all`, replies true or false; got {quoted(dict(raw))}")
        return QueryMode("history", turns=turns if counted else None, replies=replies)
    raise ValueError(f"conversation is {MODES_TEXT}; got {quoted(raw if not isinstance(raw, Mapping) else dict(raw))}")


@dataclass(frozen=True)
class Query:
    """What one question is asked with: the text, the conversation before it (chat messages; empty for a
    single question), or why no text could be made (its rewriter failed): that question is then not asked."""

    text: str
    history: tuple[Mapping[str, str], ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class QueryPlan:
    """A retriever's mode and, for `{rewriter: NAME}`, how to build that rewriter (only when a set has
    turns to rewrite) and the folder its rewrites are cached in."""

    mode: QueryMode = CURRENT
    rewriter: Callable[[], Rewriter] | None = None
    cache: Path | None = None
    setup: str | None = None
    """The fingerprint of the retriever's kind and parameters, its mode aside: a run is set beside the
    `rewrite` run of the same setup (the rewrite gap), never beside another retriever's."""


def chat_history(history: Sequence[GoldenQuestion]) -> tuple[dict[str, str], ...]:
    """The turns before a turn as chat messages: each utterance, then the reply the set records, if any."""
    messages: list[dict[str, str]] = []
    for turn in history:
        messages.append({"role": "user", "content": turn.question})
        if turn.turn is not None and turn.turn.reply is not None:
            messages.append({"role": "assistant", "content": turn.turn.reply})
    return tuple(messages)


def query_text(question: GoldenQuestion, history: Sequence[GoldenQuestion], mode: QueryMode) -> str:
    """The text `question` is asked with under `mode` (not `rewriter`, which asks a service: the runner's)."""
    turn = question.turn
    if turn is None or mode.name in ("current", "rewriter"):
        return question.question
    if mode.name == "rewrite":
        return turn.rewrite or question.question
    earlier = history if mode.turns is None else history[-mode.turns :]
    lines = [message["content"] for message in chat_history(earlier) if mode.replies or message["role"] == "user"]
    return TURN_JOINER.join([*lines, question.question])


def without_rewrite(question_set: GoldenQuestionSet) -> GoldenQuestion | None:
    """The first turn after an opening one that has no rewrite, which `rewrite` cannot ask."""
    return next((q for q in question_set.questions if q.turn is not None and q.turn.number > 1 and q.turn.rewrite is None), None)


def check_rewrites(question_set: GoldenQuestionSet, retriever: str) -> None:
    """`rewrite` asks every later turn by the set's rewrite: a turn without one is refused before any work."""
    missing = without_rewrite(question_set)
    if missing is not None:
        turn = missing.turn
        raise InvalidInputError(
            f"retriever {quoted(retriever)} asks turns by the set's rewrite (conversation: rewrite), and set "
            f"{quoted(question_set.identifier)} has none for this turn; write one, or use another mode",
            key=f"conversation {quoted(turn.conversation)} turn {turn.number}",
            field="rewrite",
        )
