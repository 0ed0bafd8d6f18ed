"""Golden-set versions: label churn is not retriever churn.

Two runs are compared only on the questions present in both with the same fingerprint (fingerprints.py);
every other difference is a set edit, reported as such and never counted for or against the retriever.

Runs stored before fingerprints existed carry none. Their questions are matched by id and by the labels
the per-question table holds (expected ids, form, hard class); a reworded question text goes unnoticed
there, and the changes say so (`by_labels`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from retrieval_pipeline.core.base.formatting import counted, id_list
from retrieval_pipeline.core.scoring.question_columns import QuestionColumns
from retrieval_pipeline.core.scoring.results import RunResult

MAX_NAMED = 10
"""Question ids a sentence names before it says how many more."""


@dataclass(frozen=True)
class SetChanges:
    """How the current run's questions differ from the baseline's; `compared_ids` are the unchanged ones
    (and the relabelled ones a rescored baseline kept)."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    relabelled: tuple[str, ...]
    compared_ids: tuple[str, ...]
    by_labels: bool = False
    """Some question was matched by id and labels alone: a run stored before fingerprints, text unchecked."""
    rescored: tuple[str, ...] = ()
    """Relabelled questions kept in the comparison: the baseline was rescored under the current labels
    (rescoring.py), so they are among `compared_ids`."""
    not_rescored: str | None = None
    """Why the baseline could not be rescored, when questions were relabelled: they are left out."""
    not_rescored_questions: tuple[tuple[str, str], ...] = ()
    """(question id, why) for each relabelled question left out of the comparison: the one account every
    output gives (the verdict's sentence, JSON, Markdown, the Dagster check's metadata)."""

    @property
    def compared(self) -> int:
        return len(self.compared_ids)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.relabelled)

    @property
    def kept(self) -> str:
        """What the compared questions are called: "unchanged", or "compared" once relabelled ones were kept."""
        return "compared" if self.rescored else "unchanged"

    @property
    def scope(self) -> str:
        """ " on the 6 unchanged questions" after a set edit: what a check's changes were measured on."""
        return f" on the {self.compared} {self.kept} questions" if self.changed else ""

    @property
    def rescore_sentence(self) -> str | None:
        """What rescoring did to the baseline, when questions were relabelled since it: the verdict ends
        with it (the set-change line says only what changed)."""
        if self.not_rescored:
            left_out = id_list([question_id for question_id, _ in self.not_rescored_questions], limit=MAX_NAMED)
            return f"Baseline not rescored under the current labels ({self.not_rescored}): relabelled questions left out ({left_out})."
        kept, left = len(self.rescored), len(self.not_rescored_questions)
        if not left:
            return f"Baseline rescored under the current labels: {counted(kept, 'relabelled question')} kept." if kept else None
        listed = by_reason(self.not_rescored_questions)
        if not kept:
            return f"Baseline not rescored under the current labels: {counted(left, 'relabelled question')} left out: {listed}."
        return (
            f"Baseline rescored under the current labels: {counted(kept, 'relabelled question')} kept, {left} left out: {listed}."
        )

    def sentence(self, against: str = "the baseline") -> str:
        """One line for reports: "Set changed since the baseline: 1 added, 4 relabelled; compared on 6
        unchanged questions"."""
        kinds = (("added", self.added), ("removed", self.removed), ("relabelled", self.relabelled))
        edits = [f"{len(ids)} {what}" for what, ids in kinds if ids]
        if edits:
            kept = "" if self.rescored else " unchanged"
            line = f"Set changed since {against}: {', '.join(edits)}; compared on {self.compared}{kept} questions"
        else:
            line = f"Set unchanged since {against}: compared on all {self.compared} questions"
        if self.by_labels:
            line += f" ({against} predates question fingerprints: matched by question id and labels, text not checked)"
        return line + "."


def set_changes(current: RunResult, baseline: RunResult) -> SetChanges:
    """Ids in the current run's order (removed ones in the baseline's)."""
    now, then = current.questions, baseline.questions
    earlier, fingerprints, old_fingerprints = then.positions, now.values("fingerprint"), then.values("fingerprint")
    added, relabelled, unchanged, by_labels = [], [], [], False
    for position, question_id in enumerate(now.ids):
        old = earlier.get(question_id)
        if old is None:
            added.append(question_id)
            continue
        if fingerprints[position] is not None and old_fingerprints[old] is not None:
            same = fingerprints[position] == old_fingerprints[old]
        else:
            same, by_labels = _labels(now, position) == _labels(then, old), True
        (unchanged if same else relabelled).append(question_id)
    removed = [question_id for question_id in then.ids if question_id not in now.positions]
    return SetChanges(tuple(added), tuple(removed), tuple(relabelled), tuple(unchanged), by_labels)


def by_reason(questions: Sequence[tuple[str, str]]) -> str:
    """(question id, why) pairs as a check's verdict and `history --rescore` name them: the ids of each
    reason clipped, then the reason ("q7, q9 (asked with another text: ...)")."""
    reasons: dict[str, list[str]] = {}
    for question_id, reason in questions:
        reasons.setdefault(reason, []).append(question_id)
    return "; ".join(f"{id_list(ids, limit=MAX_NAMED)} ({reason})" for reason, ids in reasons.items())


def _labels(questions: QuestionColumns, position: int) -> tuple:
    """What a question without a fingerprint is matched by: its expected ids (as a set), form and hard class."""
    expected = questions.values("expected_document_ids")[position]
    return tuple(sorted(expected)), questions.values("form")[position], questions.values("hard_class")[position]


def restrict(run: RunResult, question_ids: Sequence[str]) -> RunResult:
    """The same run (its id, time and retriever kept) over only these questions, in this order, so
    restricted runs line up question by question."""
    if list(question_ids) == run.questions.ids:
        return run
    positions = run.questions.positions
    return replace(run, questions=run.questions.take(positions[question_id] for question_id in question_ids))


def unchanged_across(reference: RunResult, others: Sequence[RunResult]) -> tuple[tuple[SetChanges, ...], tuple[str, ...]]:
    """Each other run's changes against the reference, and the reference's questions unchanged in all."""
    changes = tuple(set_changes(other, reference) for other in others)
    unchanged = [set(c.compared_ids) for c in changes]
    kept = [question_id for question_id in reference.questions.ids if all(question_id in ids for ids in unchanged)]
    return changes, tuple(kept)
