"""Golden set files in YAML, JSON or JSONL, with errors that name the file, question id and field.

A set's conversations are read by conversation_files.py into turns validated here with its questions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from retrieval_pipeline.core.base.errors import InvalidInputError, did_you_mean, quoted, validation_problem
from retrieval_pipeline.core.base.text_files import parse_json, parse_yaml, read_text
from retrieval_pipeline.core.golden.conversation_files import (
    JSONL_CONVERSATION,
    jsonl_entries,
    turn_field,
    turn_key,
    turn_questions,
)
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet

SET_FILE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")
_QUESTION_LIST = TypeAdapter(list[GoldenQuestion])


def load_question_set_file(path: str | Path) -> GoldenQuestionSet:
    """YAML and JSON hold one mapping (identifier, name, description, questions and/or conversations).

    JSONL holds the set's header on its first line and one question (or turn, naming its conversation)
    per following line, which keeps large sets streamable and diff-friendly.
    """
    path = Path(path)
    source = str(path)
    if path.suffix not in SET_FILE_SUFFIXES:
        raise InvalidInputError(f"unsupported set file type; use one of {', '.join(SET_FILE_SUFFIXES)}", source=source)
    return question_set_from_text(read_text(path, "set file"), path.suffix, source)


def question_set_from_text(text: str, suffix: str, source: str) -> GoldenQuestionSet:
    """A set file's text as `load_question_set_file` would read it: an edit is checked before it is written."""
    return _parsed(text, suffix, source)


@lru_cache(maxsize=32)
def _parsed(text: str, suffix: str, source: str) -> GoldenQuestionSet:
    """Memoised on the file's whole text (sets are immutable): a nightly reads every set file once per
    Dagster run, and parsing and validating costs far more than reading; an edited file is parsed anew."""
    if suffix == ".jsonl":
        return _from_jsonl(text, source)
    parse = parse_json if suffix == ".json" else parse_yaml
    return question_set_from_mapping(parse(text, source), source)


def _from_jsonl(text: str, source: str) -> GoldenQuestionSet:
    lines = [(number, line) for number, line in enumerate(text.split("\n"), start=1) if line.strip()]
    if not lines:
        raise InvalidInputError("empty file; the first line must hold the set's identifier and name", source=source)
    header = _json_line(*lines[0], source)
    if not isinstance(header, Mapping):
        raise InvalidInputError("line 1 must be a JSON object with the set's identifier and name", source=source)
    if f'"{JSONL_CONVERSATION}"' not in text:  # no turn line: the whole set parsed and validated in one pydantic call
        try:
            questions = _QUESTION_LIST.validate_json("[" + ",".join(line for _, line in lines[1:]) + "]")
        except ValidationError:
            pass  # read line by line below, to name the bad line or question
        else:
            return question_set_from_mapping({**header, "questions": questions}, source)
    questions, conversations = jsonl_entries([(number, _json_line(number, line, source)) for number, line in lines[1:]], source)
    turns = {"conversations": conversations} if conversations else {}
    return question_set_from_mapping({**header, "questions": questions, **turns}, source)


def _json_line(number: int, line: str, source: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as error:
        raise InvalidInputError(f"invalid JSON: {error.msg}", source=f"{source}:{number}:{error.colno}") from None


def question_set_from_mapping(data: Any, source: str) -> GoldenQuestionSet:
    """Validate question by question first, so an error names the question id, then the set. The set's
    questions come first, then its conversations' turns, each conversation's in order."""
    if not isinstance(data, Mapping):
        raise InvalidInputError("expected a mapping with identifier, name, description and questions", source=source)
    known = (*GoldenQuestionSet.model_fields, "conversations")
    unknown = next((str(key) for key in data if key not in known), None)
    if unknown is not None:  # before `questions` is looked for: `questoins` is the problem, not a missing list
        raise InvalidInputError(f"is not a known field{did_you_mean(unknown, known)}", source=source, field=unknown)
    raw_questions = data.get("questions", [] if "conversations" in data else None)
    if not isinstance(raw_questions, list):
        raise InvalidInputError("must be a list of questions", source=source, field="questions")
    turns = turn_questions(data["conversations"], source) if "conversations" in data else []
    questions = _questions(raw_questions, turns, source)
    misplaced = next((q for q in questions[: len(raw_questions)] if q.turn is not None), None)
    if misplaced is not None:
        raise InvalidInputError(
            "a conversation's turn is written under `conversations:`",
            source=source,
            key=f"question {quoted(misplaced.id)}",
            field="turn",
        )
    header = {key: value for key, value in data.items() if key != "conversations"}
    try:
        return GoldenQuestionSet.model_validate({**header, "questions": questions})
    except ValidationError as error:
        raise _invalid(error, GoldenQuestionSet, source, key=None) from None


def _questions(raw_questions: list, turns: list[dict], source: str) -> list[GoldenQuestion]:
    """All at once (one pydantic call, fast for large sets); one by one only to name a bad question or turn."""
    try:
        return _QUESTION_LIST.validate_python(raw_questions + turns)
    except ValidationError:
        return [_question(raw, index, source) for index, raw in enumerate(raw_questions)] + [_turn(raw, source) for raw in turns]


def _question(raw: Any, index: int, source: str) -> GoldenQuestion:
    key = f"question {quoted(raw.get('id'))}" if isinstance(raw, Mapping) and raw.get("id") else f"question #{index + 1}"
    if not isinstance(raw, Mapping):
        raise InvalidInputError("must be a mapping", source=source, key=key)
    try:
        return GoldenQuestion.model_validate(dict(raw))
    except ValidationError as error:
        raise _invalid(error, GoldenQuestion, source, key=key) from None


def _turn(raw: dict, source: str) -> GoldenQuestion:
    """A turn as `conversation_files.turn_questions` made it a question; its problem named by the file's keys."""
    try:
        return GoldenQuestion.model_validate(raw)
    except ValidationError as error:
        key = turn_key(raw["turn"]["conversation"], raw["turn"]["number"])
        raise _invalid(error, GoldenQuestion, source, key=key, named=turn_field) from None


def _invalid(
    error: ValidationError, model: type, source: str, key: str | None, named: Callable[[list[str]], str | None] | None = None
) -> InvalidInputError:
    """`named` gives the field a problem's location is in the file, when the file's keys are not the model's."""
    location, message = validation_problem(error, model)
    if error.errors()[0]["type"] == "enum":
        message = f"{quoted(error.errors()[0]['input'])} is not a known form; use 'match' or 'gap'"
    elif len(location) > 1 and location[1].isdigit():
        message = f"item {int(location[1]) + 1}: {message}"
    field = named(location) if named else location[0] if location else None
    return InvalidInputError(message, source=source, key=key, field=field)
