"""Judged sampled queries (`coverage --sample`) become new golden questions in `judge --apply`.

A row is a new question's when its `question_id` is not in the set and it carries `source_log`. Its
expected ids are the documents judged yes, its rejected ids those judged no, its form is tagged from the
query's word overlap with the documents judged yes (core/golden/forms.py; `gap` with none), its hard class
is left empty, and its source log and traffic are recorded. A query none of whose rows is judged is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.forms import tag_form
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.golden.questions import GoldenQuestion
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.services.labels.judging_files import is_new_question_row, numbered_judging_rows
from retrieval_pipeline.core.services.labels.pooling import corpus_texts


def judged_new_questions(judging_path: Path, set_path: Path, config: ProjectConfig) -> list[GoldenQuestion]:
    """The new questions the judging file's judged sampled queries make, checked, not yet written."""
    question_set = load_question_set_file(set_path)
    known = {question.id for question in question_set.questions}
    rows = [(where, row) for where, row in numbered_judging_rows(judging_path) if is_new_question_row(row, known)]
    return new_questions(rows, config)


def new_questions(rows: Sequence[tuple[str, dict]], config: ProjectConfig) -> list[GoldenQuestion]:
    """(file:line, row) of new questions' rows, in file order, to one question per judged query."""
    grouped: dict[str, list[tuple[str, dict]]] = {}
    for where, row in rows:
        grouped.setdefault(row["question_id"], []).append((where, row))
    judged = {question_id: group for question_id, group in grouped.items() if any(row["judgement"] for _, row in group)}
    wanted = {row["document_id"] for group in judged.values() for _, row in group if row["judgement"] == "yes"}
    texts = corpus_texts(config, wanted) if wanted else {}
    return [_question(question_id, group, texts) for question_id, group in judged.items()]


def _question(question_id: str, group: list[tuple[str, dict]], texts: dict[str, tuple[str, str]]) -> GoldenQuestion:
    where, first = group[0]
    expected = tuple(dict.fromkeys(row["document_id"] for _, row in group if row["judgement"] == "yes"))
    rejected = tuple(dict.fromkeys(row["document_id"] for _, row in group if row["judgement"] == "no"))
    documents = [" ".join(texts[d]) if d in texts else _row_text(group, d) for d in expected]
    return GoldenQuestion(
        id=question_id,
        question=first["question"],
        form=tag_form(first["question"], documents),
        expected_document_ids=expected,
        rejected_document_ids=rejected,
        source_log=first["source_log"],
        source_traffic=_traffic(first.get("traffic"), where),
    )


def _row_text(group: list[tuple[str, dict]], document_id: str) -> str:
    """The judging file's own (shortened) text of a document no configured corpus holds."""
    row = next(row for _, row in group if row["document_id"] == document_id)
    return f"{row.get('title', '')} {row.get('text', '')}"


def _traffic(value, where: str) -> int | None:
    if value in (None, ""):
        return None
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        return int(value)
    raise InvalidInputError("must be a whole number (the query's count in its log)", source=where, field="traffic")
