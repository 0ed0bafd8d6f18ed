"""Rescoring: a stored run scored again under today's labels, exactly, from the ids it kept.

A run keeps each question's distinct retrieved ids down to its deepest cut-off (run_tables.py), and
every hit and measure is computed from those ids and the labels (question_columns.py). Putting the
current labels on a stored run's questions therefore scores its rankings exactly as a fresh run with
the same rankings would be scored. Every label the fingerprint covers is taken, the rejected ids too:
they change no hit, and a question that only gained rejected ids (each `no` of a judging round) must
stay compared like any other relabelled one. Only a question asked with the same text is rescored (its
stored fingerprint is that of today's text under its old labels): a reworded question's ranking
answered another question. A relabelled question also takes today's machine-judged ids, so a machine
label it now scores under is never counted as a person's (judged@k). Each question left out is named with why. Nothing is written: the rescored
run is a new value and the stored files stay as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from retrieval_pipeline.core.golden.fingerprints import question_fingerprint
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.scoring.question_columns import QuestionColumns
from retrieval_pipeline.core.scoring.question_fields import FIELDS
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.set_versions import SetChanges, restrict, set_changes

LABEL_FIELDS = ("expected_document_ids", "form", "hard_class", "rejected_document_ids", "fingerprint")
"""What rescoring replaces on a relabelled question: everything its fingerprint covers but the text."""


@dataclass(frozen=True)
class Rescoring:
    """A run under the current labels: `relabelled` are the questions whose labels it took."""

    run: RunResult
    relabelled: tuple[str, ...] = ()
    refused: str | None = None
    """Why the run could not be rescored (it is then the stored run, unchanged)."""
    not_rescored: tuple[tuple[str, str], ...] = ()
    """(question id, why) for each question the set changed that kept its stored labels."""


REWORDED = "asked with another text: its stored ranking answered another question"


@dataclass(frozen=True)
class RescoredBaseline:
    """A check's baseline scored again under the current labels, beside the baseline as stored. Every change
    the check reports was computed from `rescored`: it is the baseline figure shown beside a change (marked
    as rescored), and `stored`'s is the one the store, the history and a chart of stored runs show for it."""

    rescored: RunResult
    stored: RunResult


def rescored(run: RunResult, question_set: GoldenQuestionSet, cutoffs: Sequence[int] | None = None) -> Rescoring:
    """`run` under `question_set`'s labels, scored at `cutoffs` (default: its own). A question whose expected
    ids changed needs stored ids that reach the deepest cut-off (a ranking kept to rank 3 cannot say what
    rank 10 held); one whose other labels alone changed (rejected ids, form, hard class) changes no hit and
    takes its new labels at any depth. A run kept shallower than `cutoffs` keeps its own."""
    cutoffs = tuple(cutoffs or run.cutoffs)
    stored = run.questions
    if any(fingerprint is None for fingerprint in stored.values("fingerprint")):
        return Rescoring(run, refused="it predates question fingerprints, so its question texts cannot be checked")
    shallow = cutoffs[-1] > run.cutoffs[-1]
    too_shallow = f"its ids were kept to rank {run.cutoffs[-1]} only, this run is scored to rank {cutoffs[-1]}"
    labels = {name: list(stored.values(name)) for name in LABEL_FIELDS}
    machine = list(stored.values("machine_judged_document_ids"))
    current = {question.id: question for question in question_set.questions}
    relabelled, left_out = [], []
    for position, question_id in enumerate(stored.ids):
        question = current.get(question_id)
        if question is None:
            continue
        now = (question.expected_document_ids, question.form.value, question.hard_class, question.rejected_document_ids)
        then = tuple(labels[name][position] for name in LABEL_FIELDS[:-1])
        fingerprint = labels["fingerprint"][position]
        relabelled_to = question_fingerprint(question.question, *now, context=question_set.turn_context(question))
        if fingerprint == relabelled_to:
            continue
        if fingerprint != question_fingerprint(question.question, *then, context=question_set.turn_context(question)):
            left_out.append((question_id, REWORDED))
        elif shallow and set(now[0]) != set(then[0]):
            left_out.append((question_id, too_shallow))
        else:
            for name, value in zip(LABEL_FIELDS, (*now, relabelled_to)):
                labels[name][position] = value
            machine[position] = question.machine_expected_document_ids + question.machine_rejected_document_ids
            relabelled.append(question_id)
    scored_at = run.cutoffs if shallow else cutoffs
    if not relabelled and scored_at == run.cutoffs:
        return Rescoring(run, not_rescored=tuple(left_out))
    columns = {name: labels[name] if name in labels else stored.column(name) for name in FIELDS}
    columns["machine_judged_document_ids"] = machine
    run = replace(run, questions=QuestionColumns.of(**columns), cutoffs=scored_at)
    return Rescoring(run, tuple(relabelled), not_rescored=tuple(left_out))


def under_current_labels(run: RunResult, question_set: GoldenQuestionSet) -> Rescoring:
    """`run` as the current set scores it: relabelled questions rescored, and only the questions the set
    still asks with the same text kept (a removed or reworded question has no current label for the
    ranking stored). A run that cannot be rescored, or shares no question with the set, stays as stored."""
    rescoring = rescored(run, question_set)
    if rescoring.refused is not None:
        return rescoring
    current = {
        q.id: question_fingerprint(
            q.question,
            q.expected_document_ids,
            q.form.value,
            q.hard_class,
            q.rejected_document_ids,
            context=question_set.turn_context(q),
        )
        for q in question_set.questions
    }
    questions = rescoring.run.questions
    kept = [i for i, fingerprint in zip(questions.ids, questions.values("fingerprint")) if current.get(i) == fingerprint]
    if not kept:
        return Rescoring(run, refused="it shares no question with the current set")
    return replace(rescoring, run=restrict(rescoring.run, kept))


def rescored_baseline(current: RunResult, baseline: RunResult, question_set: GoldenQuestionSet) -> tuple[RunResult, SetChanges]:
    """The baseline a check compares with and the set changes it reports: when questions were relabelled
    since the baseline, the baseline rescored under `question_set`'s labels at the current run's cut-offs,
    so the relabelled questions stay compared; else (or when it cannot be rescored) the baseline as stored."""
    changes = set_changes(current, baseline)
    if not changes.relabelled:
        return baseline, changes
    rescoring = rescored(baseline, question_set, current.cutoffs)
    if rescoring.refused is not None:
        left_out = tuple((question_id, rescoring.refused) for question_id in changes.relabelled)
        return baseline, replace(changes, not_rescored=rescoring.refused, not_rescored_questions=left_out)
    kept = set_changes(current, rescoring.run)
    kept_ids = frozenset(kept.compared_ids)
    return rescoring.run, replace(
        kept,
        relabelled=changes.relabelled,
        rescored=tuple(i for i in changes.relabelled if i in kept_ids),
        not_rescored_questions=rescoring.not_rescored,
    )
