"""Changing some questions' labels in a set file in place, keeping the file's format and its layout, so
a diff shows the changed labels and nothing else: YAML gets only the new ids inserted where its lists
are (folding, quoting, key order and comments untouched), JSONL rewrites only the changed questions'
lines, JSON keeps its key order. The new text is read back as a set, and must hold exactly the intended
labels, before it replaces the file, atomically, so a bad edit never reaches the disk.
"""

from __future__ import annotations

import json
from pathlib import Path

from retrieval_pipeline.core.base.durable import write_text_atomically
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.text_files import read_text
from retrieval_pipeline.core.golden.judgements import Labels
from retrieval_pipeline.core.golden.question_files import SET_FILE_SUFFIXES, question_set_from_text

_EXPECTED, _REJECTED = "expected_document_ids", "rejected_document_ids"


def relabel_set_file(path: Path, labels: Labels) -> Path:
    path = Path(path)
    if path.suffix not in SET_FILE_SUFFIXES:
        raise InvalidInputError(f"unsupported set file type; use one of {', '.join(SET_FILE_SUFFIXES)}", source=str(path))
    text = read_text(path, "set file")
    edit = {".jsonl": _jsonl, ".json": _json}.get(path.suffix, _yaml)
    edited = edit(text, labels)
    before = question_set_from_text(text, path.suffix, str(path))
    after = question_set_from_text(edited, path.suffix, str(path))
    intended = {q.id: labels.get(q.id, (q.expected_document_ids, q.rejected_document_ids)) for q in before.questions}
    if {q.id: (q.expected_document_ids, q.rejected_document_ids) for q in after.questions} != intended:
        raise InvalidInputError(
            "its layout (a list shared through a YAML alias?) does not let the labels be edited in place; edit it by hand",
            source=str(path),
        )
    return write_text_atomically(path, edited)


def _relabel(question: dict, labels: Labels) -> bool:
    if question.get("id") not in labels:
        return False
    expected, rejected = labels[question["id"]]
    question[_EXPECTED] = list(expected)
    if rejected:
        question[_REJECTED] = list(rejected)
    return True


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
    """The new ids spliced into the text at the positions the parser reports, last first so that earlier
    positions stay valid (at one position, the expected ids go before the rejected ones)."""
    import yaml

    windows = "\r\n" in text
    text = text.replace("\r\n", "\n")
    root = yaml.compose(text, Loader=yaml.SafeLoader)  # in Python: its marks count characters, libyaml's bytes
    insertions = []
    for question in _entries(root)["questions"].value:
        entries = _entries(question)
        if entries["id"].value in labels:
            expected, rejected = labels[entries["id"].value]
            insertions += _grown(text, entries[_EXPECTED], expected)
            if _REJECTED in entries:
                insertions += _grown(text, entries[_REJECTED], rejected)
            elif rejected:
                insertions.append(_new_rejected(text, question, entries, rejected))
    for position, addition in reversed(sorted(insertions, key=lambda insertion: insertion[0])):
        text = text[:position] + addition + text[position:]
    return text.replace("\n", "\r\n") if windows else text


def _entries(mapping) -> dict:
    return {key.value: value for key, value in mapping.value}


def _grown(text: str, sequence, ids: tuple[str, ...]) -> list[tuple[int, str]]:
    """Insertions appending the ids beyond those already listed, in the list's own style: inside the
    brackets of a flow list, one `- id` line per id under a block list's last item."""
    added = [_scalar(document_id) for document_id in ids[len(sequence.value) :]]
    if not added:
        return []
    if sequence.flow_style:
        if sequence.value:
            return [(sequence.value[-1].end_mark.index, "".join(f", {document_id}" for document_id in added))]
        return [(sequence.end_mark.index - 1, ", ".join(added))]
    last = sequence.value[-1].start_mark.index
    dash = text[text.rfind("\n", 0, last) + 1 : last]
    position, newline = _line_end(text, sequence.value[-1].end_mark.index)
    return [(position, newline + "".join(f"{dash}{document_id}\n" for document_id in added))]


def _new_rejected(text: str, question, entries: dict, ids: tuple[str, ...]) -> tuple[int, str]:
    """`rejected_document_ids: [...]` right after the expected ids, in the question's own style."""
    listed = f"{_REJECTED}: [{', '.join(_scalar(document_id) for document_id in ids)}]"
    expected = entries[_EXPECTED]
    if question.flow_style:
        return expected.end_mark.index, f", {listed}"
    last = expected.value[-1] if expected.value and not expected.flow_style else expected
    position, newline = _line_end(text, last.end_mark.index)
    key = next(key for key, _ in question.value if key.value == _EXPECTED)
    return position, f"{newline}{' ' * key.start_mark.column}{listed}\n"


def _line_end(text: str, index: int) -> tuple[int, str]:
    """Where the line holding `index` ends (after its comment and newline), and the newline to add first
    when it is the file's last line and has none."""
    end = text.find("\n", index)
    return (len(text), "\n") if end < 0 else (end + 1, "")


def _scalar(document_id: str) -> str:
    """Plain when YAML reads it back as this very string in a flow list, else double-quoted (JSON's
    quoting is valid YAML): `123`, `yes` or `a, b` stay strings."""
    import yaml

    try:
        plain = yaml.safe_load(f"[{document_id}]") == [document_id]
    except yaml.YAMLError:
        plain = False
    return document_id if plain else json.dumps(document_id, ensure_ascii=False)
