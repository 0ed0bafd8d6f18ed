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
from collections.abc import Collection, Sequence
from dataclasses import asdict
from pathlib import Path

from retrieval_pipeline.core.base.durable import write_text_atomically
from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.base.text_files import JSON_ERRORS, json_problem, read_text
from retrieval_pipeline.core.golden.judgements import Judgement, LabelChange, Labels, merged_labels
from retrieval_pipeline.core.golden.machine_labels import machine_merged
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.golden.set_file_edits import relabel_set_file
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.services.labels.audit import retriever_corpora
from retrieval_pipeline.core.services.labels.pooling import Candidate

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
CONVERSATION = "conversation"
"""A turn's conversation so far (pooling.Candidate): a column before `question`, written only when a row has it."""
MACHINE_FIELDS = ("machine_judgement", "machine_grade", "judged_by")
"""A machine judge's answer, its 0-3 grade (empty when the judge gives none or failed) and who gave it
(`name@fingerprint`): columns of their own, so a machine's answer never passes for a person's `judgement`.
Written only once a judge has filled them; a file without them reads as one never machine-judged."""
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
        context = {CONVERSATION: candidate.conversation} if candidate.conversation else {}
        rows.append({name: row[name] for name in FIELDS[:3]} | context | {name: row[name] for name in FIELDS[3:]})
    return rows


def judged_question(row: dict) -> str:
    """What a machine judge reads as a row's question: a turn's conversation so far, then the turn as typed."""
    if not row.get(CONVERSATION):
        return row.get("question", "")
    return f"{row[CONVERSATION]}\nuser: {row.get('question', '')}"


def is_new_question_row(row: dict, known: Collection[str]) -> bool:
    """A sampled query's row: it names its log, and its question id is none of the set's (`known`)."""
    return bool(row.get("source_log")) and row["question_id"] not in known


def is_candidate_row(row: dict, known: Collection[str]) -> bool:
    """A generated candidate's row: it names its generator, and its question id is none of the set's."""
    return bool(row.get("generated_by")) and row["question_id"] not in known


def write_judging_file(rows: Sequence[dict], path: Path) -> Path:
    path = Path(path)
    if path.suffix not in SUFFIXES:
        raise InvalidInputError(f"a judging file is {' or '.join(SUFFIXES)}", source=str(path))
    if path.suffix == ".jsonl":
        return write_text_atomically(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    machine = any(name in row for row in rows for name in MACHINE_FIELDS)
    buffer = io.StringIO()
    fieldnames = [*FIELDS, *(MACHINE_FIELDS if machine else ())]
    if any(CONVERSATION in row for row in rows):
        fieldnames.insert(FIELDS.index("question"), CONVERSATION)
    extra = [name for name in dict.fromkeys(name for row in rows for name in row) if name not in fieldnames]
    writer = csv.DictWriter(buffer, fieldnames=[*fieldnames, *extra], lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({name: _cell(value) for name, value in row.items()})
    return write_text_atomically(path, buffer.getvalue())


def _cell(value) -> str:
    if isinstance(value, list):
        return LIST_SEPARATOR.join(value)
    return "" if value is None else str(value)


def answer_count(path: Path) -> int:
    """How many rows of a judging file a person or a judge has answered: a file to write candidates over
    must hold none, or the answers would be lost."""
    return sum(1 for row in read_judging_file(path) if row["judgement"] or row.get("machine_judgement"))


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
    labels, changes = human_labels(question_set, question_rows(judging_path, question_set), config)
    machine, _ = machine_merged(question_set, labels, {})  # a person's new label wins over a machine's
    if labels:
        relabel_set_file(set_path, labels, machine)
    return changes


def question_rows(judging_path: Path, question_set: GoldenQuestionSet, *, candidates: bool = False) -> list[tuple[str, dict]]:
    """The file's rows about the set's questions: rows of sampled queries that are not questions yet
    (`coverage --sample`) are left to `new_questions`, and generated candidates' rows to
    `generated_questions`, unless `candidates` keeps them (a machine judge's calibration reads them too)."""
    known = {question.id for question in question_set.questions}
    return [
        (where, row)
        for where, row in numbered_judging_rows(judging_path)
        if not is_new_question_row(row, known) and (candidates or not is_candidate_row(row, known))
    ]


def human_labels(
    question_set: GoldenQuestionSet, rows: list[tuple[str, dict]], config: ProjectConfig
) -> tuple[Labels, list[LabelChange]]:
    """The set's new human labels from the rows' `judgement`s (see `apply_judgements`)."""
    judgements = [
        Judgement(row["question_id"], row["document_id"], row["judgement"] == YES, where, row.get("question", ""))
        for where, row in rows
        if row["judgement"]
    ]
    return merged_labels(question_set, judgements, ranking_corpora(rows, config))


def ranking_corpora(rows: list[tuple[str, dict]], config: ProjectConfig) -> dict[str, frozenset[str]]:
    """The corpora a yes among `rows` must name a document of: those of the configured retrievers their
    `ranked_by` names, where the retriever's kind knows its corpus."""
    rankers = dict.fromkeys(entry.rpartition("@")[0] for _, row in rows for entry in row.get("ranked_by", ()))
    return retriever_corpora(config, [identifier for identifier in rankers if identifier in config.retriever_specs])


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
    except JSON_ERRORS as error:  # bad syntax, nesting thousands deep, a number of thousands of digits
        raise InvalidInputError(f"invalid JSON: {json_problem(error)}", source=where) from None
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
    return {**row, "judgement": answer, **_machine_answer(row, where)}


def _machine_answer(row: dict, where: str) -> dict:
    """The machine columns when present: `machine_judgement` yes, no or empty, `machine_grade` 0-3 or
    empty (an integer, or None), `judged_by` a string."""
    if not any(name in row for name in MACHINE_FIELDS):
        return {}
    answer, grade, by = (row.get(name) for name in MACHINE_FIELDS)
    answer = "" if answer is None else answer
    if not isinstance(answer, str) or answer.strip().lower() not in ANSWERS:
        raise InvalidInputError(f"{quoted(answer)} is not yes, no or empty", source=where, field="machine_judgement")
    if grade in (None, ""):
        grade = None
    elif isinstance(grade, bool) or str(grade).strip() not in ("0", "1", "2", "3"):
        raise InvalidInputError(f"{quoted(grade)} is not a grade 0-3 or empty", source=where, field="machine_grade")
    else:
        grade = int(str(grade).strip())
    if not isinstance(by or "", str):
        raise InvalidInputError("must be a string", source=where, field="judged_by")
    return {"machine_judgement": answer.strip().lower(), "machine_grade": grade, "judged_by": by or ""}
