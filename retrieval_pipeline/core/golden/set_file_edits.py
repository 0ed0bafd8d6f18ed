"""Changing some questions' labels in a set file in place, keeping the file's format and what it can of
its layout: YAML keeps its comments and key order (ruamel.yaml's round trip), JSONL rewrites only the
changed questions' lines, JSON keeps its key order. The new text is read back as a set before it
replaces the file, atomically, so a bad edit never reaches the disk.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from retrieval_pipeline.core.base.durable import write_text_atomically
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.text_files import read_text
from retrieval_pipeline.core.golden.judgements import Labels
from retrieval_pipeline.core.golden.question_files import SET_FILE_SUFFIXES, load_question_set_file

_EXPECTED, _REJECTED = "expected_document_ids", "rejected_document_ids"


def relabel_set_file(path: Path, labels: Labels) -> Path:
    path = Path(path)
    if path.suffix not in SET_FILE_SUFFIXES:
        raise InvalidInputError(f"unsupported set file type; use one of {', '.join(SET_FILE_SUFFIXES)}", source=str(path))
    text = read_text(path, "set file")
    edit = {".jsonl": _jsonl, ".json": _json}.get(path.suffix, _yaml)
    edited = edit(text, labels)
    staged = path.with_name(f".{path.name}.relabelled{path.suffix}")
    try:
        staged.write_text(edited, encoding="utf-8")
        load_question_set_file(staged)  # the edited set must read back before it replaces the file
    finally:
        staged.unlink(missing_ok=True)
    return write_text_atomically(path, edited)


def _relabel(question: dict, labels: Labels) -> bool:
    if question.get("id") not in labels:
        return False
    expected, rejected = labels[question["id"]]
    _extend(question, _EXPECTED, expected)
    if rejected:
        _extend(question, _REJECTED, rejected)
    return True


def _extend(question: dict, name: str, ids: tuple[str, ...]) -> None:
    """Appended to the list already there (a YAML list keeps its style and comments), else set."""
    current = question.get(name)
    if current is None:
        question[name] = list(ids)
    else:
        current.extend(document_id for document_id in ids[len(current) :])


def _jsonl(text: str, labels: Labels) -> str:
    lines = text.split("\n")
    for number, line in enumerate(lines[1:], start=1):
        if line.strip():
            question = json.loads(line)
            if _relabel(question, labels):
                lines[number] = json.dumps(question, ensure_ascii=False)
    return "\n".join(lines)


def _json(text: str, labels: Labels) -> str:
    document = json.loads(text)
    for question in document["questions"]:
        _relabel(question, labels)
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def _yaml(text: str, labels: Labels) -> str:
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    document = yaml.load(text)
    for question in document["questions"]:
        _relabel(question, labels)
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()
