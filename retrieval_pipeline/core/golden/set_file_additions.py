"""New questions appended to a set file in place, keeping the file's format and layout, so a diff shows
the added questions and nothing else: JSONL gets one line each, JSON is rewritten with its key order,
YAML gets block entries after the last question in the list's own indentation (a set of conversations
alone gets a `questions:` list at its end). The new text is read back and must be the old set plus exactly
the new questions before it replaces the file, atomically. Questions only: a turn belongs to a conversation
a person writes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from retrieval_pipeline.core.base.durable import write_text_atomically
from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.base.text_files import read_text
from retrieval_pipeline.core.golden.question_file_writer import question_set_document
from retrieval_pipeline.core.golden.question_files import SET_FILE_SUFFIXES, question_set_from_text
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet


def add_questions_to_set_file(path: Path, questions: Sequence[GoldenQuestion]) -> Path:
    path = Path(path)
    if path.suffix not in SET_FILE_SUFFIXES:
        raise InvalidInputError(f"unsupported set file type; use one of {', '.join(SET_FILE_SUFFIXES)}", source=str(path))
    text = read_text(path, "set file")
    before = question_set_from_text(text, path.suffix, str(path))
    turn = next((question.id for question in questions if question.turn is not None), None)
    if turn is not None:
        raise InvalidInputError(f"{quoted(turn)} is a turn: add it to its conversation by hand", source=str(path), field="turn")
    known = {question.id for question in before.questions}
    repeated = next((question.id for question in questions if question.id in known), None)
    if repeated is not None:
        raise InvalidInputError(f"question {quoted(repeated)} is in the set already", source=str(path), field="id")
    entries = _documents(before, questions)
    edited = {".jsonl": _jsonl, ".json": _json}.get(path.suffix, _yaml)(text, entries)
    after = question_set_from_text(edited, path.suffix, str(path))
    singles = tuple(question for question in before.questions if question.turn is None)
    if after.questions != singles + tuple(questions) + before.questions[len(singles) :]:  # the turns come last
        raise InvalidInputError("its layout does not let questions be appended in place; add them by hand", source=str(path))
    return write_text_atomically(path, edited)


def _documents(question_set: GoldenQuestionSet, questions: Sequence[GoldenQuestion]) -> list[dict]:
    """Each question as a set file holds it (unset optional fields left out), via the writer's one rule."""
    added = question_set.model_copy(update={"questions": tuple(questions)})
    return question_set_document(added)["questions"]


def _jsonl(text: str, entries: list[dict]) -> str:
    ending = "" if text.endswith("\n") else "\n"
    return text + ending + "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in entries)


def _json(text: str, entries: list[dict]) -> str:
    document = json.loads(text)
    document.setdefault("questions", []).extend(entries)
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def _yaml(text: str, entries: list[dict]) -> str:
    """Block entries after the last question, at its dash's column; a flow-style list is left to a person
    (the read-back check refuses the result)."""
    import yaml

    windows = "\r\n" in text
    text = text.replace("\r\n", "\n")
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    questions = next((value for key, value in root.value if key.value == "questions"), None)
    if questions is None:
        block = yaml.safe_dump({"questions": entries}, sort_keys=False, allow_unicode=True, width=120)
        text = text + ("" if text.endswith("\n") else "\n") + block
        return text.replace("\n", "\r\n") if windows else text
    if questions.flow_style or not questions.value:
        return text
    last = questions.value[-1]
    dash_column = text[text.rfind("\n", 0, last.start_mark.index) + 1 : last.start_mark.index]
    indent = " " * (len(dash_column) - 2) if dash_column.endswith("- ") else ""
    end = last.end_mark
    line_end = text.find("\n", end.index)
    position = end.index if end.column == 0 else len(text) if line_end < 0 else line_end + 1
    block = yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=120)
    added = "".join(indent + line + "\n" for line in block.splitlines())
    newline = "" if text[:position].endswith("\n") else "\n"
    text = text[:position] + newline + added + text[position:]
    return text.replace("\n", "\r\n") if windows else text
