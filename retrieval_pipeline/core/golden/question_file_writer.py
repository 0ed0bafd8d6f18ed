"""Writing a golden set as a file that `load_question_set_file` reads back as the same set.

The format follows the suffix (YAML, JSON, or JSONL with the header on the first line and one
question per following line). A set's turns are written grouped under `conversations:` (in JSONL, as
lines naming their conversation), after its questions. The file is written under a temporary name in
the target folder and renamed into place, so an error never leaves a half-written set behind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from retrieval_pipeline.core.base.durable import write_text_atomically
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.conversation_files import conversation_documents, jsonl_turn_lines
from retrieval_pipeline.core.golden.question_files import SET_FILE_SUFFIXES
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet

HEADER_FIELDS = ("identifier", "name", "description", "machine_judged_by", "machine_calibration", "generated_questions")
OPTIONAL_LISTS = ("rejected_document_ids", "machine_expected_document_ids", "machine_rejected_document_ids")


def question_set_document(question_set: GoldenQuestionSet) -> dict[str, Any]:
    """The mapping a set file holds; optional fields that are unset (or, for the optional id lists, empty)
    are left out, and so is `questions` when the set holds only conversations."""
    document = question_set.model_dump(mode="json", exclude_none=True)
    for question in document["questions"]:
        for name in OPTIONAL_LISTS:
            if not question[name]:
                del question[name]
    turns = [question for question in document["questions"] if "turn" in question]
    if not turns:
        return document
    questions = [question for question in document["questions"] if "turn" not in question]
    placed: dict[str, Any] = {}
    for key, value in document.items():
        if key == "questions":  # the conversations follow the questions, where a reader looks for them
            placed.update({"questions": questions} if questions else {})
            placed["conversations"] = conversation_documents(turns)
        else:
            placed[key] = value
    return placed


def dump_question_set(question_set: GoldenQuestionSet, suffix: str) -> str:
    document = question_set_document(question_set)
    if suffix == ".jsonl":
        header = {field: document[field] for field in HEADER_FIELDS if field in document}
        lines = [header, *document.get("questions", ()), *jsonl_turn_lines(document.get("conversations", ()))]
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    if suffix == ".json":
        return json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    if suffix in (".yaml", ".yml"):
        import yaml

        return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=120)
    raise InvalidInputError(f"unsupported set file type {suffix!r}; use one of {', '.join(SET_FILE_SUFFIXES)}")


def write_question_set_file(question_set: GoldenQuestionSet, path: str | Path, *, overwrite: bool = False) -> Path:
    """Write atomically; an existing file is only replaced when `overwrite` is set."""
    path = Path(path)
    if path.suffix not in SET_FILE_SUFFIXES:
        raise InvalidInputError(f"unsupported set file type; use one of {', '.join(SET_FILE_SUFFIXES)}", source=str(path))
    if path.exists() and not overwrite:
        raise InvalidInputError("the file already exists and is not overwritten", source=str(path))
    return write_text_atomically(path, dump_question_set(question_set, path.suffix))
