"""Golden conversations in set files: a `conversations:` section in YAML and JSON, turn lines in JSONL.

A file groups a conversation's turns under it, numbered in order, and calls a turn's text its `utterance`
(what the user typed, beside an optional `reply` and `rewrite`); in memory each turn is a question of the
set (conversations.py). Reading flattens the turns into questions and writing groups them again, so a set
reads back as it was written. A turn says it expects nothing with `nothing_to_retrieve: true`: an empty
expected list is a turn nobody labelled as often as one nothing answers, and the two must not be confused.
Every problem names the file, the turn (`conversation 'wings' turn 2`) and the key the file has for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from retrieval_pipeline.core.base.errors import InvalidInputError, did_you_mean, quoted
from retrieval_pipeline.core.golden.conversations import TURN_SEPARATOR, turn_id
from retrieval_pipeline.core.golden.questions import GoldenQuestion

CONVERSATION_FIELDS = ("id", "turns")
NOTHING = "nothing_to_retrieve"
_EXPECTED = "expected_document_ids"
_OWN = ("turn", "utterance", "reply", "rewrite", NOTHING)
TURN_FIELDS = _OWN + tuple(name for name in GoldenQuestion.model_fields if name not in ("id", "question", "turn"))
"""The keys of a turn in a set file: its place and texts, then a question's labels and provenance."""
_TURN_KEYS = frozenset(TURN_FIELDS)
JSONL_CONVERSATION = "conversation"
"""The key that makes a JSONL line a turn (of the conversation it names) rather than a question."""


def turn_key(conversation: object, number: object) -> str:
    return f"conversation {quoted(conversation)} turn {number}"


def turn_questions(raw_conversations: Any, source: str) -> list[dict]:
    """The turns of a `conversations:` section as question mappings (`id`, `question`, `turn`, labels), to
    be validated in the one pydantic call that validates the set's questions; what that call cannot name
    as a file's key (a turn's order, its explicit nothing to retrieve, a misspelt key) is checked here."""
    if not isinstance(raw_conversations, list):
        raise InvalidInputError("must be a list of conversations", source=source, field="conversations")
    questions: list[dict] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_conversations):
        questions.extend(_conversation(raw, index, source, seen))
    return questions


def _conversation(raw: Any, index: int, source: str, seen: set[str]) -> Iterable[dict]:
    conversation = raw.get("id") if isinstance(raw, Mapping) else None
    key = f"conversation {quoted(conversation)}" if conversation else f"conversation #{index + 1}"
    if not isinstance(raw, Mapping):
        raise InvalidInputError("must be a mapping with an id and turns", source=source, key=key)
    _known(raw, CONVERSATION_FIELDS, source, key)
    if not isinstance(conversation, str) or not conversation.strip() or TURN_SEPARATOR in conversation:
        problem = (
            "is required"
            if conversation is None
            else f"must be non-blank text without {TURN_SEPARATOR!r} (a turn's id is conversation/turn)"
        )
        raise InvalidInputError(problem, source=source, key=key, field="id")
    if conversation in seen:
        raise InvalidInputError(
            "is a duplicate: list all of a conversation's turns under one id", source=source, key=key, field="id"
        )
    seen.add(conversation)
    turns = raw.get("turns")
    if not isinstance(turns, list) or not turns:
        raise InvalidInputError("must list the conversation's turns, the first one first", source=source, key=key, field="turns")
    for previous, turn in enumerate(turns):
        number = turn.get("turn") if isinstance(turn, Mapping) else None
        if type(number) is not int or number != previous + 1 or not turn.keys() <= _TURN_KEYS:  # checked at C speed
            _refuse(conversation, previous, turn, source)
        yield _question(conversation, number, turn, source)


def _refuse(conversation: str, previous: int, turn: Any, source: str) -> None:
    """Why the turn after turn `previous` is not in its place (numbered previous + 1, of known keys)."""
    number = turn.get("turn") if isinstance(turn, Mapping) else None
    whole = isinstance(number, int) and not isinstance(number, bool)
    key = turn_key(conversation, number if whole else f"#{previous + 1}")
    if not isinstance(turn, Mapping):
        raise InvalidInputError("must be a mapping (turn, utterance, form, expected_document_ids, ...)", source=source, key=key)
    _known(turn, TURN_FIELDS, source, key)
    if not whole or number < 1:
        problem = "is required" if number is None else f"{quoted(number)} is not a turn number (1, 2, 3, ...)"
        raise InvalidInputError(problem, source=source, key=key, field="turn")
    if number <= previous:
        raise InvalidInputError(f"turn {number} is a duplicate", source=source, key=key, field="turn")
    where = f"comes after turn {previous}" if previous else "comes first"
    raise InvalidInputError(
        f"turn {number} {where}: turns are numbered 1, 2, 3, ... in order", source=source, key=key, field="turn"
    )


def _question(conversation: str, number: int, turn: Mapping, source: str) -> dict:
    problem = _problem(turn)
    if problem is not None:
        raise InvalidInputError(problem[1], source=source, key=turn_key(conversation, number), field=problem[0])
    expected = turn.get(_EXPECTED) or []
    place = {"conversation": conversation, "number": number}
    for text in ("reply", "rewrite"):
        if text in turn:
            place[text] = turn[text]
    labels = {name: value for name, value in turn.items() if name not in _OWN}
    return {
        "id": turn_id(conversation, number),
        "question": turn["utterance"],
        **labels,
        _EXPECTED: expected,
        "turn": place,
    }


def _problem(turn: Mapping) -> tuple[str, str] | None:
    """(key, what is wrong) when the turn lacks its utterance, or says neither what it expects nor that it
    expects nothing (an empty list alone could be a turn nobody labelled yet)."""
    nothing, expected = turn.get(NOTHING, False), turn.get(_EXPECTED)
    if "utterance" not in turn:
        rewrite = "a rewrite without an utterance: the utterance is the turn as the user typed it"
        return "utterance", rewrite if "rewrite" in turn else "is required"
    if not isinstance(nothing, bool):
        return NOTHING, f"{quoted(nothing)} is not true or false"
    if nothing and expected not in (None, []):
        return NOTHING, "is true, yet the turn lists expected document ids: keep one"
    if not nothing and not expected:
        return _EXPECTED, f"lists no document: name those that answer the turn, or say `{NOTHING}: true`"
    return None


def turn_field(location: list[str]) -> str | None:
    """The key a turn has in the file for a problem found at `location` of the question it became."""
    if not location:
        return None
    if location[0] == "question":
        return "utterance"
    if location[0] == "turn" and len(location) > 1:
        return "turn" if location[1] == "number" else location[1]
    return location[0]


def jsonl_entries(numbered: list[tuple[int, Any]], source: str) -> tuple[list, list[dict]]:
    """A JSONL set's lines after the header as (questions, conversations): a line naming a `conversation`
    is one of its turns, and a conversation's turns are gathered wherever their lines are."""
    questions, conversations = [], {}
    for number, entry in numbered:
        if not isinstance(entry, Mapping) or JSONL_CONVERSATION not in entry:
            questions.append(entry)
            continue
        conversation = entry[JSONL_CONVERSATION]
        if not isinstance(conversation, str):
            raise InvalidInputError(
                "must be the id of the turn's conversation", source=f"{source}:{number}", field=JSONL_CONVERSATION
            )
        turn = {name: value for name, value in entry.items() if name != JSONL_CONVERSATION}
        conversations.setdefault(conversation, []).append(turn)
    return questions, [{"id": conversation, "turns": turns} for conversation, turns in conversations.items()]


def _known(entry: Mapping, fields: tuple[str, ...], source: str, key: str) -> None:
    unknown = next((str(name) for name in entry if name not in fields), None)
    if unknown is not None:
        raise InvalidInputError(f"is not a known field{did_you_mean(unknown, fields)}", source=source, key=key, field=unknown)


def conversation_documents(turns: Iterable[dict]) -> list[dict]:
    """Turns dumped as questions (`model_dump`, unset fields left out), grouped as a file holds them."""
    grouped: dict[str, list[dict]] = {}
    for question in turns:
        place = question["turn"]
        labels = {name: value for name, value in question.items() if name not in ("id", "question", "turn")}
        if not labels[_EXPECTED]:  # said explicitly, in the place of the expected ids
            labels = replaced_key(labels, _EXPECTED, NOTHING, True)
        texts = {name: place[name] for name in ("reply", "rewrite") if name in place}
        entry = {"turn": place["number"], "utterance": question["question"], **texts, **labels}
        grouped.setdefault(place["conversation"], []).append(entry)
    return [{"id": conversation, "turns": entries} for conversation, entries in grouped.items()]


def replaced_key(mapping: Mapping, old: str, new: str, value: Any) -> dict:
    """`mapping` with `new: value` in the place of `old`: a file's key order is kept."""
    return {(new if name == old else name): (value if name == old else held) for name, held in mapping.items()}


def jsonl_turn_lines(conversations: Iterable[dict]) -> list[dict]:
    return [{JSONL_CONVERSATION: conversation["id"], **turn} for conversation in conversations for turn in conversation["turns"]]
