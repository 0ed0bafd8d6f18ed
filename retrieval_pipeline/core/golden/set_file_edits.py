"""Changing some questions' labels in a set file in place, keeping the file's format and its layout, so
a diff shows the changed labels and nothing else: YAML gets only the new ids inserted where its lists
are (folding, quoting, key order and comments untouched), JSONL rewrites only the changed questions'
lines, JSON keeps its key order. The turns of a set's conversations are relabelled where they are, and a
turn that expected nothing gets its first expected ids in the place of its `nothing_to_retrieve: true`.
The new text is read back as a set, and must hold exactly the intended labels, before it replaces the
file, atomically, so a bad edit never reaches the disk.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from retrieval_pipeline.core.base.durable import write_text_atomically
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.text_files import read_text
from retrieval_pipeline.core.golden.conversation_files import JSONL_CONVERSATION, NOTHING, replaced_key
from retrieval_pipeline.core.golden.conversations import turn_id
from retrieval_pipeline.core.golden.judgements import Labels
from retrieval_pipeline.core.golden.question_files import SET_FILE_SUFFIXES, question_set_from_text

_EXPECTED, _REJECTED = "expected_document_ids", "rejected_document_ids"
_MACHINE = ("machine_expected_document_ids", "machine_rejected_document_ids")
_BODY = ("questions", "conversations")
"""A set file's questions and turns, after its header keys."""


def relabel_set_file(path: Path, labels: Labels, machine: Labels | None = None, header: Mapping[str, Any] | None = None) -> Path:
    """`labels` and `machine` hold each changed question's whole new (expected, rejected) lists, human
    and machine; `header` the set's machine provenance keys (`machine_judged_by`, `machine_calibration`)."""
    path = Path(path)
    machine, header = machine or {}, dict(header or {})
    if path.suffix not in SET_FILE_SUFFIXES:
        raise InvalidInputError(f"unsupported set file type; use one of {', '.join(SET_FILE_SUFFIXES)}", source=str(path))
    text = read_text(path, "set file")
    before = question_set_from_text(text, path.suffix, str(path))
    edit = {".jsonl": _jsonl, ".json": _json}.get(path.suffix, _yaml)
    edited = edit(text, labels, machine, header)
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


def _relabel(entry: dict, question_id: str, labels: Labels, machine: Labels) -> dict | None:
    """The question's or turn's entry with its new labels; None when it has none."""
    if question_id not in labels and question_id not in machine:
        return None
    entry = dict(entry)
    if question_id in labels and labels[question_id][0] and entry.get(NOTHING):  # a turn's first expected ids
        if _EXPECTED in entry:
            del entry[NOTHING]
        else:
            entry = replaced_key(entry, NOTHING, _EXPECTED, [])
    for lists, (expected_key, rejected_key) in ((labels, (_EXPECTED, _REJECTED)), (machine, _MACHINE)):
        if question_id in lists:
            expected, rejected = lists[question_id]
            for key, ids in ((expected_key, expected), (rejected_key, rejected)):
                if ids or (key == _EXPECTED and not entry.get(NOTHING)):
                    entry[key] = list(ids)
                elif key in _MACHINE:
                    entry.pop(key, None)
    return entry


def _jsonl(text: str, labels: Labels, machine: Labels, header: Mapping[str, Any]) -> str:
    lines = text.split("\n")
    first = next(number for number, line in enumerate(lines) if line.strip())
    if header:
        lines[first] = json.dumps({**json.loads(lines[first]), **header}, ensure_ascii=False)
    for number, line in enumerate(lines[first + 1 :], start=first + 1):
        if line.strip():
            entry = json.loads(line)
            question_id = turn_id(entry[JSONL_CONVERSATION], entry["turn"]) if JSONL_CONVERSATION in entry else entry["id"]
            relabelled = _relabel(entry, question_id, labels, machine)
            if relabelled is not None:
                lines[number] = json.dumps(relabelled, ensure_ascii=False)
    return "\n".join(lines)


def _json(text: str, labels: Labels, machine: Labels, header: Mapping[str, Any]) -> str:
    document = json.loads(text)
    for entries, index, question_id in _json_entries(document):
        entries[index] = _relabel(entries[index], question_id, labels, machine) or entries[index]
    body = {key: value for key, value in document.items() if key in _BODY}
    document = {**{key: value for key, value in document.items() if key not in _BODY}, **header, **body}
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def _json_entries(document: dict) -> Iterator[tuple[list, int, str]]:
    """Where each question and turn of a JSON set is (its list and index), with its id."""
    questions = document.get("questions", [])
    for index, question in enumerate(questions):
        yield questions, index, question["id"]
    for conversation in document.get("conversations", []):
        for index, turn in enumerate(conversation["turns"]):
            yield conversation["turns"], index, turn_id(conversation["id"], turn["turn"])


def _yaml(text: str, labels: Labels, machine: Labels, header: Mapping[str, Any]) -> str:
    """The new ids spliced into the text at the positions the parser reports, last first so that earlier
    positions stay valid (at one position, the expected ids go before the rejected ones)."""
    import yaml

    windows = "\r\n" in text
    text = text.replace("\r\n", "\n")
    root = yaml.compose(text, Loader=yaml.SafeLoader)  # in Python: its marks count characters, libyaml's bytes
    edits = _header_edits(text, root, header)
    for question_id, question in _yaml_entries(root):
        entries = _entries(question)
        if question_id in labels:
            expected, rejected = labels[question_id]
            edits += _expected_edits(text, question, entries, expected)
            if _REJECTED in entries:
                edits += _grown(text, entries[_REJECTED], rejected)
            elif rejected:
                edits.append(_new_key(text, question, entries, _REJECTED, rejected))
        if question_id in machine:
            for key, ids in zip(_MACHINE, machine[question_id]):
                if key in entries:
                    node = entries[key]
                    edits.append((node.start_mark.index, node.end_mark.index, _flow(ids)))
                elif ids:
                    edits.append(_new_key(text, question, entries, key, ids))
    for start, end, replacement in reversed(sorted(edits, key=lambda edit: edit[0])):
        text = text[:start] + replacement + text[end:]
    return text.replace("\n", "\r\n") if windows else text


def _header_edits(text: str, root, header: Mapping[str, Any]) -> list[tuple[int, int, str]]:
    """Each provenance key's value replaced where the set has it, else a `key: value` line before the
    questions (or the conversations, when they come first)."""
    entries = _entries(root)
    questions = next(key for key, _ in root.value if key.value in _BODY)
    line_start = text.rfind("\n", 0, questions.start_mark.index) + 1
    edits = []
    for key, value in header.items():
        written = json.dumps(value, ensure_ascii=False)
        if key in entries:
            edits.append((entries[key].start_mark.index, entries[key].end_mark.index, written))
        else:
            edits.append((line_start, line_start, f"{' ' * questions.start_mark.column}{key}: {written}\n"))
    return edits


def _yaml_entries(root) -> Iterator[tuple[str, Any]]:
    """Each question's and turn's mapping node, with its id."""
    top = _entries(root)
    for question in top["questions"].value if "questions" in top else ():
        yield _entries(question)["id"].value, question
    for conversation in top["conversations"].value if "conversations" in top else ():
        entries = _entries(conversation)
        for turn in entries["turns"].value:
            yield turn_id(entries["id"].value, int(_entries(turn)["turn"].value)), turn


def _entries(mapping) -> dict:
    return {key.value: value for key, value in mapping.value}


def _expected_edits(text: str, question, entries: dict, ids: tuple[str, ...]) -> list[tuple[int, int, str]]:
    """The expected ids grown; a turn's first ones written in the place of its `nothing_to_retrieve: true`
    (or, when it lists an empty expected list too, beside it, the flag turned false)."""
    nothing = entries.get(NOTHING)
    if _EXPECTED in entries:
        flag = [(nothing.start_mark.index, nothing.end_mark.index, "false")] if ids and nothing is not None else []
        return _grown(text, entries[_EXPECTED], ids) + flag
    if not ids:
        return []
    key = next(name for name, _ in question.value if name.value == NOTHING)
    return [(key.start_mark.index, nothing.end_mark.index, f"{_EXPECTED}: {_flow(ids)}")]


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
    """`key: [...]` right after the question's last id list (or a turn's `nothing_to_retrieve`), in the
    question's own style (so a rejected list follows the expected ids, and the machine lists follow the
    human ones)."""
    listed = f"{key}: {_flow(ids)}"
    after = max(
        (name for name in (_EXPECTED, _REJECTED, *_MACHINE, NOTHING) if name in entries),
        key=lambda name: entries[name].end_mark.index,
    )
    last_list = entries[after]
    if question.flow_style:
        return last_list.end_mark.index, last_list.end_mark.index, f", {listed}"
    block = isinstance(last_list.value, list) and last_list.value and not last_list.flow_style
    last = last_list.value[-1] if block else last_list
    position, newline = _line_end(text, last.end_mark.index)
    column = next(name for name, _ in question.value if name.value == after).start_mark.column
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
