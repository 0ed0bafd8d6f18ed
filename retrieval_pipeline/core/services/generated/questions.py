"""Confirmed generated candidates become questions marked generated in `judge apply`.

A row is a candidate's when its `question_id` is not in the set and it carries `generated_by` (the
columns `generate` writes, core/golden/generated.py). A candidate is confirmed by a yes on its source
document, the answer it was written from: a person's, or, with `--machine` (behind the calibration gate
of machine_apply.py), a machine judge's where no person answered that row. Its other rows answered yes
and no become its expected and rejected ids as for any pooled question, a person's in the human lists
and a machine's in the machine lists, so a machine's yes never passes for a person's; as for a pooled
question, a yes must name a document of the corpus of a retriever that ranked the file, when its kind
knows it (an edited row's unknown id would block every evaluation of the set). A candidate whose
source document was judged no is not added, and one whose source document nobody judged waits in the
file for a later `judge apply`; both are counted.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.golden.generated import GeneratedProvenance
from retrieval_pipeline.core.golden.judgements import refuse_unknown_document
from retrieval_pipeline.core.golden.questions import GoldenQuestion, QuestionForm
from retrieval_pipeline.core.golden.set_file_additions import add_questions_to_set_file
from retrieval_pipeline.core.golden.set_file_edits import relabel_set_file
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.services.labels.judging_files import is_candidate_row, numbered_judging_rows, ranking_corpora


@dataclass(frozen=True)
class ConfirmedCandidates:
    questions: tuple[GoldenQuestion, ...]
    by_machine: int
    """Of `questions`, those confirmed by a machine judge's yes on the source document (no person's)."""
    refused: int
    """Candidates whose source document was judged no: not added."""
    unjudged: int
    """Candidates whose source document has no answer that counts (none, or a machine's without --machine)."""

    @property
    def machine_labelled(self) -> bool:
        return any(q.machine_expected_document_ids or q.machine_rejected_document_ids for q in self.questions)


def judged_candidates(judging_path: Path, known: Collection[str], machine: bool, config: ProjectConfig) -> ConfirmedCandidates:
    """The judging file's candidates for a set whose question ids are `known`, checked, not yet written."""
    rows = [(where, row) for where, row in numbered_judging_rows(judging_path) if is_candidate_row(row, known)]
    return confirmed_candidates(rows, machine, ranking_corpora(rows, config))


def confirmed_candidates(
    rows: Sequence[tuple[str, dict]], machine: bool, corpora: Mapping[str, frozenset[str]]
) -> ConfirmedCandidates:
    """(file:line, row) of candidates' rows, in file order, to one question per confirmed candidate; a yes
    for a document none of `corpora` holds is refused."""
    grouped: dict[str, list[tuple[str, dict]]] = {}
    for where, row in rows:
        grouped.setdefault(row["question_id"], []).append((where, row))
    questions, by_machine, refused, unjudged = [], 0, 0, 0
    for question_id, group in grouped.items():
        provenance = _provenance(question_id, group[0])
        human = _answers(group, "judgement", corpora)
        robot = {d: yes for d, yes in _answers(group, "machine_judgement", corpora).items() if d not in human} if machine else {}
        source = human.get(provenance.document_id, robot.get(provenance.document_id))
        if source is None:
            unjudged += 1
        elif not source:
            refused += 1
        else:
            by_machine += provenance.document_id not in human
            questions.append(_question(question_id, group[0], provenance, human, robot))
    return ConfirmedCandidates(tuple(questions), by_machine, refused, unjudged)


def _answers(group: list[tuple[str, dict]], column: str, corpora: Mapping[str, frozenset[str]]) -> dict[str, bool]:
    """Document id to yes, from the rows answered in `column`; two rows of one document that disagree are
    refused, and so is a yes for a document no corpus holds."""
    answers: dict[str, tuple[bool, str]] = {}
    for where, row in group:
        answer = row.get(column) or ""
        if answer == "yes":
            refuse_unknown_document(row["question_id"], row["document_id"], corpora, where)
        if answer:
            earlier = answers.setdefault(row["document_id"], (answer == "yes", where))
            if earlier[0] != (answer == "yes"):
                raise InvalidInputError(
                    f"conflicting answers for question {quoted(row['question_id'])}, document {quoted(row['document_id'])}: "
                    f"also judged at {earlier[1]}",
                    source=where,
                    field=column,
                )
    return {document_id: yes for document_id, (yes, _) in answers.items()}


def _provenance(question_id: str, first: tuple[str, dict]) -> GeneratedProvenance:
    where, row = first
    try:
        return GeneratedProvenance.from_columns(row)
    except ValidationError as error:
        problem = error.errors()[0]
        message = problem["msg"].removeprefix("Value error, ")
        raise InvalidInputError(f"generated question {quoted(question_id)}: {message}", source=where) from None


def _question(
    question_id: str, first: tuple[str, dict], provenance: GeneratedProvenance, human: dict, robot: dict
) -> GoldenQuestion:
    where, row = first
    form = row.get("form") or ""
    if form not in {f.value for f in QuestionForm}:
        raise InvalidInputError(
            f"generated question {quoted(question_id)}: {quoted(form)} is not a form; use match or gap",
            source=where,
            field="form",
        )
    return GoldenQuestion(
        id=question_id,
        question=row["question"],
        form=QuestionForm(form),
        expected_document_ids=tuple(d for d, yes in human.items() if yes),
        rejected_document_ids=tuple(d for d, yes in human.items() if not yes),
        machine_expected_document_ids=tuple(d for d, yes in robot.items() if yes),
        machine_rejected_document_ids=tuple(d for d, yes in robot.items() if not yes),
        generated=provenance,
    )


def add_to_set_file(set_file: Path, counted: bool, questions: Sequence[GoldenQuestion]) -> bool:
    """Appends `questions` to the set file; True when that ended the set's counting of its generated
    questions. A set counts them because the ones it held were measured (or a person looked at them);
    generated questions added since were neither, so every generated question stays apart again until
    `validate-generated` measures the lot. The record is dropped first, so a failed append never leaves
    unchecked questions counted."""
    lapses = counted and any(question.generated is not None for question in questions)
    if lapses:
        relabel_set_file(set_file, {}, None, {"generated_questions": None})
    add_questions_to_set_file(set_file, questions)
    return lapses
