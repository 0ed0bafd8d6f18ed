"""Changing some questions' labels in a set file in place, keeping the file's format and its layout, so
a diff shows the changed labels and nothing else: YAML gets only the new ids inserted where its lists
are (folding, quoting, key order and comments untouched), JSONL rewrites only the changed questions'
lines, JSON keeps its key order. The new text is read back as a set, and must hold exactly the intended
labels, before it replaces the file, atomically, so a bad edit never reaches the disk.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from retrieval_pipeline.core.base.durable import write_text_atomically
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.text_files import read_text
from retrieval_pipeline.core.golden.judgements import Labels
from retrieval_pipeline.core.golden.question_files import SET_FILE_SUFFIXES, question_set_from_text

_EXPECTED, _REJECTED = "expected_document_ids", "rejected_document_ids"
_MACHINE = ("machine_expected_document_ids", "machine_rejected_document_ids")


def relabel_set_file(path: Path, labels: Labels, machine: Labels | None = None, header: Mapping[str, Any] | None = None) -> Path:
    """`labels` and `machine` hold each changed question's whole new (expected, rejected) lists, human
    and machine; `header` the set's machine provenance keys (`machine_judged_by`, `machine_calibration`)."""
    path = Path(path)
    machine, header = machine or {}, dict(header or {})
    if path.suffix not in SET_FILE_SUFFIXES:
        raise InvalidInputError(f"unsupported set file type; use one of {', '.join(SET_FILE_SUFFIXES)}", source=str(path))
    text = read_text(path, "set file")
    edit = {".jsonl": _jsonl, ".json": _json}.get(path.suffix, _yaml)
    edited = edit(text, labels, machine, header)
    before = question_set_from_text(text, path.suffix, str(path))
    after = question_set_from_text(edited, path.suffix, str(path))
    if _labels_of(after) != _intended(before, labels, machine) or any(
        after.model_dump(mode="json")[key] != value for key, value in header.items()
    ):
        raise InvalidInputError(
            "its layout (a list shared through a YAML alias?) does not let the labels be edited in place; edit it by hand",
            source=str(path),
        )
    return write_text_atomically(path, edited)


def _labels_of(question_set) -> dict[str, tuple]:
    return {
        q.id: (q.expected_document_ids, q.rejected_document_ids, q.machine_expected_document_ids, q.machine_rejected_document_ids)
        for q in question_set.questions
    }


def _intended(before, labels: Labels, machine: Labels) -> dict[str, tuple]:
    return {
        question_id: labels.get(question_id, now[:2]) + machine.get(question_id, now[2:])
        for question_id, now in _labels_of(before).items()
    }


def _relabel(question: dict, labels: Labels, machine: Labels) -> bool:
    changed = False
    for lists, (expected_key, rejected_key) in ((labels, (_EXPECTED, _REJECTED)), (machine, _MACHINE)):
        if question.get("id") in lists:
            expected, rejected = lists[question["id"]]
            for key, ids in ((expected_key, expected), (rejected_key, rejected)):
                if ids or key == _EXPECTED:
                    question[key] = list(ids)
                elif key in _MACHINE:
                    question.pop(key, None)
            changed = True
    return changed


def _jsonl(text: str, labels: Labels, machine: Labels, header: Mapping[str, Any]) -> str:
    lines = text.split("\n")
    first = next(number for number, line in enumerate(lines) if line.strip())
    if header:
        lines[first] = json.dumps({**json.loads(lines[first]), **header}, ensure_ascii=False)
    for number, line in enumerate(lines[first + 1 :], start=first + 1):
        if line.strip():
            question = json.loads(line)
            if _relabel(question, labels, machine):
                lines[number] = json.dumps(question, ensure_ascii=False)
    return "\n".join(lines)


def _json(text: str, labels: Labels, machine: Labels, header: Mapping[str, Any]) -> str:
    document = json.loads(text)
    for question in document["questions"]:
        _relabel(question, labels, machine)
    document = {
        **{key: value for key, value in document.items() if key != "questions"},
        **header,
        "questions": document["questions"],
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def _yaml(text: str, labels: Labels, machine: Labels, header: Mapping[str, Any]) -> str:
    """The new ids spliced into the text at the positions the parser reports, last first so that earlier
    positions stay valid (at one position, the expected ids go before the rejected ones)."""
    import yaml

    windows = "\r\n" in text
    text = text.replace("\r\n", "\n")
    root = yaml.compose(text, Loader=yaml.SafeLoader)  # in Python: its marks count characters, libyaml's bytes
    edits = _header_edits(text, root, header)
    for question in _entries(root)["questions"].value:
        entries = _entries(question)
        if entries["id"].value in labels:
            expected, rejected = labels[entries["id"].value]
            edits += _grown(text, entries[_EXPECTED], expected)
            if _REJECTED in entries:
                edits += _grown(text, entries[_REJECTED], rejected)
            elif rejected:
                edits.append(_new_key(text, question, entries, _REJECTED, rejected))
        if entries["id"].value in machine:
            for key, ids in zip(_MACHINE, machine[entries["id"].value]):
                if key in entries:
                    node = entries[key]
                    edits.append((node.start_mark.index, node.end_mark.index, _flow(ids)))
                elif ids:
                    edits.append(_new_key(text, question, entries, key, ids))
    for start, end, replacement in reversed(sorted(edits, key=lambda edit: edit[0])):
        text = text[:start] + replacement + text[end:]
    return text.replace("\n", "\r\n") if windows else text


def _header_edits(text: str, root, header: Mapping[str, Any]) -> list[tuple[int, int, str]]:
    """Each provenance key's value replaced where the set has it, else a `key: value` line before `questions:`."""
    entries = _entries(root)
    questions = next(key for key, _ in root.value if key.value == "questions")
    line_start = text.rfind("\n", 0, questions.start_mark.index) + 1
    edits = []
    for key, value in header.items():
        written = json.dumps(value, ensure_ascii=False)
        if key in entries:
            edits.append((entries[key].start_mark.index, entries[key].end_mark.index, written))
        else:
            edits.append((line_start, line_start, f"{' ' * questions.start_mark.column}{key}: {written}\n"))
    return edits


def _entries(mapping) -> dict:
    return {key.value: value for key, value in mapping.value}


def _grown(text: str, sequence, ids: tuple[str, ...]) -> list[tuple[int, int, str]]:
    """Insertions appending the ids beyond those already listed, in the list's own style: inside the
    brackets of a flow list, one `- id` line per id under a block list's last item."""
    added = [_scalar(document_id) for document_id in ids[len(sequence.value) :]]
    if not added:
        return []
    if sequence.flow_style:
        if sequence.value:
            end = sequence.value[-1].end_mark.index
            return [(end, end, "".join(f", {document_id}" for document_id in added))]
        return [(sequence.end_mark.index - 1, sequence.end_mark.index - 1, ", ".join(added))]
    last = sequence.value[-1].start_mark.index
    dash = text[text.rfind("\n", 0, last) + 1 : last]
    position, newline = _line_end(text, sequence.value[-1].end_mark.index)
    return [(position, position, newline + "".join(f"{dash}{document_id}\n" for document_id in added))]


def _new_key(text: str, question, entries: dict, key: str, ids: tuple[str, ...]) -> tuple[int, int, str]:
    """`key: [...]` right after the question's last id list, in the question's own style (so a rejected
    list follows the expected ids, and the machine lists follow the human ones)."""
    listed = f"{key}: {_flow(ids)}"
    after = max(
        (name for name in (_EXPECTED, _REJECTED, *_MACHINE) if name in entries), key=lambda name: entries[name].end_mark.index
    )
    last_list = entries[after]
    if question.flow_style:
        return last_list.end_mark.index, last_list.end_mark.index, f", {listed}"
    last = last_list.value[-1] if last_list.value and not last_list.flow_style else last_list
    position, newline = _line_end(text, last.end_mark.index)
    column = next(name for name, _ in question.value if name.value == _EXPECTED).start_mark.column
    return position, position, f"{newline}{' ' * column}{listed}\n"


def _flow(ids: tuple[str, ...]) -> str:
    return f"[{', '.join(_scalar(document_id) for document_id in ids)}]"


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
