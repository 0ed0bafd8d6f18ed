"""Golden-set versions (issue 11): label churn is not retriever churn.

Two runs are compared only on the questions present in both with the same fingerprint (fingerprints.py);
every other difference is a set edit, reported as such and never counted for or against the retriever.

Runs stored before fingerprints existed carry none. Their questions are matched by id and by the labels
the per-question table holds (expected ids, form, hard class); a reworded question text goes unnoticed
there, and the changes say so (`by_labels`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult


@dataclass(frozen=True)
class SetChanges:
    """How the current run's questions differ from the baseline's; `compared_ids` are the unchanged ones."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    relabelled: tuple[str, ...]
    compared_ids: tuple[str, ...]
    by_labels: bool = False
    """Some question was matched by id and labels alone: a run stored before fingerprints, text unchecked."""

    @property
    def compared(self) -> int:
        return len(self.compared_ids)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.relabelled)

    def sentence(self, against: str = "the baseline") -> str:
        """One line for reports: "Set changed since the baseline: 1 added, 4 relabelled; compared on 6
        unchanged questions"."""
        kinds = (("added", self.added), ("removed", self.removed), ("relabelled", self.relabelled))
        edits = [f"{len(ids)} {what}" for what, ids in kinds if ids]
        if edits:
            line = f"Set changed since {against}: {', '.join(edits)}; compared on {self.compared} unchanged questions"
        else:
            line = f"Set unchanged since {against}: compared on all {self.compared} questions"
        if self.by_labels:
            line += f" ({against} predates question fingerprints: matched by question id and labels, text not checked)"
        return line + "."


def set_changes(current: RunResult, baseline: RunResult) -> SetChanges:
    """Ids in the current run's order (removed ones in the baseline's)."""
    before = {q.question_id: q for q in baseline.questions}
    present = {q.question_id for q in current.questions}
    added, relabelled, unchanged, by_labels = [], [], [], False
    for question in current.questions:
        old = before.get(question.question_id)
        if old is None:
            added.append(question.question_id)
            continue
        same, labels_only = _same_question(question, old)
        by_labels |= labels_only
        (unchanged if same else relabelled).append(question.question_id)
    removed = [q.question_id for q in baseline.questions if q.question_id not in present]
    return SetChanges(tuple(added), tuple(removed), tuple(relabelled), tuple(unchanged), by_labels)


def _same_question(current: QuestionResult, baseline: QuestionResult) -> tuple[bool, bool]:
    """(identical, decided by labels alone)."""
    if current.fingerprint is not None and baseline.fingerprint is not None:
        return current.fingerprint == baseline.fingerprint, False
    return _labels(current) == _labels(baseline), True


def _labels(question: QuestionResult) -> tuple:
    return tuple(sorted(question.expected_document_ids)), question.form, question.hard_class


def restrict(run: RunResult, question_ids: Sequence[str]) -> RunResult:
    """The same run (its id, time and retriever kept) over only these questions, in this order, so
    restricted runs line up question by question."""
    if len(question_ids) == run.question_count and all(q.question_id == i for q, i in zip(run.questions, question_ids)):
        return run
    by_id = {q.question_id: q for q in run.questions}
    return replace(run, questions=tuple(by_id[question_id] for question_id in question_ids))


def unchanged_across(reference: RunResult, others: Sequence[RunResult]) -> tuple[tuple[SetChanges, ...], tuple[str, ...]]:
    """Each other run's changes against the reference, and the reference's questions unchanged in all."""
    changes = tuple(set_changes(other, reference) for other in others)
    unchanged = [set(c.compared_ids) for c in changes]
    kept = [q.question_id for q in reference.questions if all(q.question_id in ids for ids in unchanged)]
    return changes, tuple(kept)
