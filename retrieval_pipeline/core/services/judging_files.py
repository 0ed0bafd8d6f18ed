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
from retrieval_pipeline.core.services.audit import retriever_corpora
from retrieval_pipeline.core.services.config import ProjectConfig
from retrieval_pipeline.core.services.new_questions import is_new_question_row
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
    extra = [name for name in dict.fromkeys(name for row in rows for name in row) if name not in FIELDS]
    writer = csv.DictWriter(buffer, fieldnames=[*FIELDS, *extra], lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({name: LIST_SEPARATOR.join(value) if isinstance(value, list) else value for name, value in row.items()})
    return write_text_atomically(path, buffer.getvalue())


def read_judging_file(path: Path) -> list[dict]:
    return [row for _, row in numbered_judging_rows(path)]


def numbered_judging_rows(path: Path) -> list[tuple[str, dict]]:
    """(file:line, row) with lists as lists; a row without its question id, document id or judgement, with
    an answer other than yes, no or nothing, or cut short (a save or a copy stopped midway, which would
    lose every answer after it unseen), is refused naming the file, the line and the field."""
    path = Path(path)
    if path.suffix not in SUFFIXES:
        raise InvalidInputError(f"a judging file is {' or '.join(SUFFIXES)}", source=str(path))
    text = read_text(path, "judging file")
    if path.suffix == ".jsonl":
        numbered = [
            (number, _json_row(line, f"{path}:{number}")) for number, line in enumerate(text.splitlines(), 1) if line.strip()
        ]
    else:
        numbered = _csv_rows(text, path)
    return [(f"{path}:{number}", _checked(row, f"{path}:{number}")) for number, row in numbered]


def apply_judgements(judging_path: Path, set_path: Path, config: ProjectConfig) -> list[LabelChange]:
    """Merge the file's yes and no answers into the set file (empty answers are not judgements); the set
    file is left untouched when anything is refused or nothing changes. Rows of sampled queries that are
    not questions yet are left to `new_questions`. A yes must name a document of
    the corpus of a retriever the file's `ranked_by` names, when `config` knows that retriever's corpus."""
    question_set = load_question_set_file(set_path)
    known = {question.id for question in question_set.questions}
    rows = [(where, row) for where, row in numbered_judging_rows(judging_path) if not is_new_question_row(row, known)]
    judgements = [
        Judgement(row["question_id"], row["document_id"], row["judgement"] == YES, where, row.get("question", ""))
        for where, row in rows
        if row["judgement"]
    ]
    rankers = dict.fromkeys(entry.rpartition("@")[0] for _, row in rows for entry in row.get("ranked_by", ()))
    corpora = retriever_corpora(config, [identifier for identifier in rankers if identifier in config.retriever_specs])
    labels, changes = merged_labels(question_set, judgements, corpora)
    if labels:
        relabel_set_file(set_path, labels)
    return changes


def _csv_rows(text: str, path: Path) -> list[tuple[int, dict]]:
    """(first line, row) of each record; a record with more or fewer cells than the header is what a file
    cut short in the middle of a row looks like."""
    records = _csv_records(text, path)
    header = records[0][1] if records else []
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise InvalidInputError("the header lacks this column", source=str(path), field=missing[0])
    for start, cells in records[1:]:
        if len(cells) != len(header):
            raise InvalidInputError(
                f"{len(cells)} cells where the header has {len(header)}: the file is cut short here or the row is broken",
                source=f"{path}:{start}",
            )
    return [(start, _listed(dict(zip(header, cells)))) for start, cells in records[1:]]


def _csv_records(text: str, path: Path) -> list[tuple[int, list[str]]]:
    """(first line, cells) of every record but blank lines; a quoted cell that never closes is what a file
    cut short inside a quote looks like (a lenient reader would take the rest of the file as its text)."""
    reader = csv.reader(io.StringIO(text), strict=True)
    records = []
    start = 1
    try:
        for cells in reader:
            if cells:
                records.append((start, cells))
            start = reader.line_num + 1
    except csv.Error as error:
        cut = "unexpected end of data" in str(error)
        problem = "the file ends inside a quoted cell: it is cut short here" if cut else f"invalid CSV: {error}"
        raise InvalidInputError(problem, source=f"{path}:{start}") from None
    return records


def _json_row(line: str, where: str) -> dict:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as error:
        raise InvalidInputError(f"invalid JSON: {error.msg}", source=where) from None
    if not isinstance(row, dict):
        raise InvalidInputError("expected a JSON object", source=where)
    return row


def _listed(row: dict[str, str]) -> dict:
    lists = ("expected_document_ids", "rejected_document_ids", "ranked_by")
    return {name: ([] if not value else value.split(LIST_SEPARATOR)) if name in lists else value for name, value in row.items()}


def _checked(row: dict, where: str) -> dict:
    for name in REQUIRED:
        if name not in row or not isinstance(row[name], str) or (name != "judgement" and not row[name]):
            raise InvalidInputError(
                "must be a non-empty string" if name != "judgement" else "must be a string", source=where, field=name
            )
    if not isinstance(row.get("question", ""), str):
        raise InvalidInputError("must be a string", source=where, field="question")
    ranked_by = row.get("ranked_by", [])
    if not isinstance(ranked_by, list) or not all(isinstance(entry, str) for entry in ranked_by):
        raise InvalidInputError("must be a list of retriever@rank strings", source=where, field="ranked_by")
    answer = row["judgement"].strip().lower()
    if answer not in ANSWERS:
        raise InvalidInputError(
            f"{quoted(row['judgement'])} is not an answer; use yes, no or leave it empty", source=where, field="judgement"
        )
    return {**row, "judgement": answer}
