"""Judging files: one row per candidate (question, document), CSV for a spreadsheet or JSONL for tools.

`pool` writes them with an empty `judgement`; a person fills it with `yes`, `no` or leaves it empty, in
`retrieval-eval judge` or in any spreadsheet, and `judge --apply` merges the answers into the set file.
Every write replaces the file atomically, so a judging session stopped at any point loses at most the
answer being typed and never leaves half a file.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from retrieval_pipeline.core.base.durable import write_text_atomically
from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.base.text_files import read_text
from retrieval_pipeline.core.golden.judgements import Judgement, LabelChange, merged_labels
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.golden.set_file_edits import relabel_set_file
from retrieval_pipeline.core.services.pooling import Candidate

FIELDS = (
    "question_id",
    "document_id",
    "judgement",
    "question",
    "expected_document_ids",
    "rejected_document_ids",
    "expected_title",
    "ranked_by",
    "title",
    "text",
)
REQUIRED = FIELDS[:3]
YES, NO = "yes", "no"
ANSWERS = (YES, NO, "")
SUFFIXES = (".csv", ".jsonl")
LIST_SEPARATOR = "; "
"""Between the ids of a list in a CSV cell (JSONL keeps arrays)."""


def candidate_rows(candidates: Sequence[Candidate]) -> list[dict]:
    """Rows as JSONL holds them: id lists as arrays, `ranked_by` as `retriever@rank` strings."""
    rows = []
    for candidate in candidates:
        row = {name: list(value) if isinstance(value, tuple) else value for name, value in asdict(candidate).items()}
        row["ranked_by"] = [f"{retriever}@{rank}" for retriever, rank in candidate.ranked_by]
        row["judgement"] = ""
        rows.append({name: row[name] for name in FIELDS})
    return rows


def write_judging_file(rows: Sequence[dict], path: Path) -> Path:
    path = Path(path)
    if path.suffix not in SUFFIXES:
        raise InvalidInputError(f"a judging file is {' or '.join(SUFFIXES)}", source=str(path))
    if path.suffix == ".jsonl":
        return write_text_atomically(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({name: LIST_SEPARATOR.join(value) if isinstance(value, list) else value for name, value in row.items()})
    return write_text_atomically(path, buffer.getvalue())


def read_judging_file(path: Path) -> list[dict]:
    return [row for _, row in numbered_judging_rows(path)]


def numbered_judging_rows(path: Path) -> list[tuple[str, dict]]:
    """(file:line, row) with lists as lists; a row without its question id, document id or judgement, or with an
    answer other than yes, no or nothing, is refused naming the file, the line and the field."""
    path = Path(path)
    if path.suffix not in SUFFIXES:
        raise InvalidInputError(f"a judging file is {' or '.join(SUFFIXES)}", source=str(path))
    text = read_text(path, "judging file")
    if path.suffix == ".jsonl":
        numbered = [
            (number, _json_row(line, f"{path}:{number}")) for number, line in enumerate(text.splitlines(), 1) if line.strip()
        ]
    else:
        reader = csv.DictReader(io.StringIO(text))
        missing = [name for name in REQUIRED if name not in (reader.fieldnames or ())]
        if missing:
            raise InvalidInputError("the header lacks this column", source=str(path), field=missing[0])
        numbered = [(reader.line_num, _listed(row)) for row in reader]
    return [(f"{path}:{number}", _checked(row, f"{path}:{number}")) for number, row in numbered]


def apply_judgements(judging_path: Path, set_path: Path) -> list[LabelChange]:
    """Merge the file's yes and no answers into the set file (empty answers are not judgements); the set
    file is left untouched when anything is refused or nothing changes."""
    question_set = load_question_set_file(set_path)
    judgements = [
        Judgement(row["question_id"], row["document_id"], row["judgement"] == YES, where)
        for where, row in numbered_judging_rows(judging_path)
        if row["judgement"]
    ]
    labels, changes = merged_labels(question_set, judgements)
    if labels:
        relabel_set_file(set_path, labels)
    return changes


def _json_row(line: str, where: str) -> dict:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as error:
        raise InvalidInputError(f"invalid JSON: {error.msg}", source=where) from None
    if not isinstance(row, dict):
        raise InvalidInputError("expected a JSON object", source=where)
    return row


def _listed(row: dict) -> dict:
    lists = ("expected_document_ids", "rejected_document_ids", "ranked_by")
    return {
        name: ([] if not value else value.split(LIST_SEPARATOR)) if name in lists else (value or "")
        for name, value in row.items()
    }


def _checked(row: dict, where: str) -> dict:
    for name in REQUIRED:
        if name not in row or not isinstance(row[name], str) or (name != "judgement" and not row[name]):
            raise InvalidInputError(
                "must be a non-empty string" if name != "judgement" else "must be a string", source=where, field=name
            )
    answer = row["judgement"].strip().lower()
    if answer not in ANSWERS:
        raise InvalidInputError(
            f"{quoted(row['judgement'])} is not an answer; use yes, no or leave it empty", source=where, field="judgement"
        )
    return {**row, "judgement": answer}
