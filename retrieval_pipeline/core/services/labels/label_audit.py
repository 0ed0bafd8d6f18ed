"""Findings about a golden set's labels: pure functions over the set, the corpora and stored runs.

A set is only as good as its labels. A label naming no document of any corpus cannot be right (a typo,
a deleted or re-chunked page); a label every retriever misses while two of them agree on another first
document is probably wrong (two that judge apart: a fusion repeats its members, so its agreement with
them is one opinion, not two); a question whose hit flips back and forth while neither the set nor the
index changed measures noise, not the retriever. Each finding names the question and what is wrong, so
a labeller can act on it.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult

ERROR, WARNING, INFO = "error", "warning", "info"
MIN_FLIPS = 2
OPTIMISTIC = "optimistic_"
"""Prefixes a tested rate's column (`optimistic_top1_hit_rate`): the rate if every suspect's candidate were relevant."""


@dataclass(frozen=True)
class Finding:
    kind: str
    severity: str
    question_id: str | None
    message: str
    details: tuple[tuple[str, object], ...] = field(default=())

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "question_id": self.question_id,
            "message": self.message,
            **dict(self.details),
        }


def labels_not_in_corpus(question_set: GoldenQuestionSet, corpora: Mapping[str, frozenset[str]]) -> list[Finding]:
    """A label is wrong only when NO known corpus holds it: retrievers may index different slices."""
    if not corpora:
        return []
    names = ", ".join(corpora)
    return [
        Finding(
            "label_not_in_corpus",
            ERROR,
            question.id,
            f"expected document '{document_id}' is in no known corpus ({names})",
            (("document_id", document_id),),
        )
        for question in question_set.questions
        for document_id in question.expected_document_ids
        if not any(document_id in corpus for corpus in corpora.values())
    ]


def normalised_text(text: str) -> str:
    """Case, punctuation and spacing do not make two questions different questions."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[^\w\s]", " ", folded).split())


def repeated_questions(question_set: GoldenQuestionSet) -> list[Finding]:
    """Each later copy of a text: a duplicate when its labels agree with the first, a conflict otherwise.
    A turn's text is the conversation up to it: "and at supersonic speeds?" after two different first
    turns asks two different things."""
    first_seen: dict[str, GoldenQuestion] = {}
    findings = []
    for question in question_set.questions:
        asked = " / ".join(normalised_text(turn.question) for turn in (*question_set.history(question), question))
        first = first_seen.setdefault(asked, question)
        if first is question:
            continue
        if set(first.expected_document_ids) == set(question.expected_document_ids):
            findings.append(
                Finding(
                    "duplicate_question", WARNING, question.id, f"same question as '{first.id}'", (("duplicate_of", first.id),)
                )
            )
        else:
            findings.append(
                Finding(
                    "conflicting_labels",
                    ERROR,
                    question.id,
                    f"same question as '{first.id}' but labelled {list(question.expected_document_ids)} "
                    f"instead of {list(first.expected_document_ids)}",
                    (("duplicate_of", first.id), ("other_expected_document_ids", list(first.expected_document_ids))),
                )
            )
    return findings


def empty_label_mix(question_set: GoldenQuestionSet) -> list[Finding]:
    """Reported, never an error: empty labels are legitimate, but a set of mostly empty labels rewards a
    retriever for answering nothing."""
    empty = sum(1 for question in question_set.questions if not question.expected_document_ids)
    if not empty:
        return []
    total = len(question_set.questions)
    return [
        Finding(
            "empty_label_mix",
            INFO,
            None,
            f"{empty} of {total} questions ({empty / total:.1%}) declare that no document answers them",
            (("empty_label_questions", empty), ("share", empty / total)),
        )
    ]


def same_labels(result: QuestionResult, question: GoldenQuestion) -> bool:
    """A stored outcome speaks for the question as labelled today only if its labels were the same."""
    return (
        set(result.expected_document_ids) == set(question.expected_document_ids)
        and result.form == question.form.value
        and result.hard_class == question.hard_class
    )


def _current_outcomes(question_set: GoldenQuestionSet, run: RunResult) -> dict[str, QuestionResult]:
    labelled = {question.id: question for question in question_set.questions}
    return {
        r.question_id: r
        for r in run.questions
        if r.error is None and r.question_id in labelled and same_labels(r, labelled[r.question_id])
    }


@dataclass(frozen=True)
class Suspect:
    question_id: str
    candidate_document_id: str
    retrievers: tuple[str, ...]


def suspect_labels(
    question_set: GoldenQuestionSet, latest_runs: Sequence[RunResult], echoes: Mapping[str, Collection[str]] | None = None
) -> list[Suspect]:
    """Every retriever misses the labels in its top 3 and at least two independent ones put the same other
    document first. `echoes` names, per retriever, those whose rankings it repeats (a fusion's members)."""
    if len(latest_runs) < 2:
        return []
    outcomes = [_current_outcomes(question_set, run) for run in latest_runs]
    suspects = []
    for question in question_set.questions:
        answers = [(run.retriever_identifier, by_id.get(question.id)) for run, by_id in zip(latest_runs, outcomes)]
        if not question.expected_document_ids or any(a is None or a.hit_at(TESTED[-1].k) for _, a in answers):
            continue
        firsts = Counter(a.retrieved_document_ids[0] for _, a in answers if a.retrieved_document_ids)
        for candidate, _ in firsts.most_common():
            retrievers = tuple(name for name, a in answers if a.retrieved_document_ids[:1] == (candidate,))
            if _independent(retrievers, echoes or {}):
                suspects.append(Suspect(question.id, candidate, retrievers))
                break
    return suspects


def _independent(retrievers: Sequence[str], echoes: Mapping[str, Collection[str]]) -> bool:
    """Whether two of them rank apart: neither repeats the other, nor do both repeat a third."""
    lineages = [_lineage(retriever, echoes) for retriever in retrievers]
    return any(one.isdisjoint(other) for one, other in combinations(lineages, 2))


def _lineage(retriever: str, echoes: Mapping[str, Collection[str]]) -> frozenset[str]:
    """The retriever and every retriever its ranking repeats, through fusions of fusions."""
    seen: set[str] = set()
    pending = [retriever]
    while pending:
        name = pending.pop()
        if name not in seen:
            seen.add(name)
            pending.extend(echoes.get(name, ()))
    return frozenset(seen)


def suspect_findings(suspects: Sequence[Suspect]) -> list[Finding]:
    return [
        Finding(
            "suspect_label",
            WARNING,
            s.question_id,
            f"every retriever misses the labels; {', '.join(s.retrievers)} rank '{s.candidate_document_id}' first",
            (("candidate_document_id", s.candidate_document_id), ("retrievers", list(s.retrievers))),
        )
        for s in suspects
    ]


def optimistic_rates(latest_runs: Sequence[RunResult], suspects: Sequence[Suspect]) -> dict[str, dict[str, float]]:
    """Each retriever's rates if every candidate were relevant: how much label error could be hiding."""
    candidates = {s.question_id: s.candidate_document_id for s in suspects}
    rates = {}
    for run in latest_runs:
        total = run.question_count or 1
        hits = dict.fromkeys(TESTED, 0)
        for result in run.questions:
            for figure in hits:
                k = figure.k
                hits[figure] += bool(result.hit_at(k)) or candidates.get(result.question_id) in result.retrieved_document_ids[:k]
        rates[run.retriever_identifier] = {
            **{figure.column: run.hit_rate(figure.k) for figure in TESTED},
            **{f"{OPTIMISTIC}{figure.column}": count / total for figure, count in hits.items()},
        }
    return rates


def flip_counts(question_set: GoldenQuestionSet, oldest_first: Sequence[RunResult]) -> dict[str, int]:
    """Changes of a question's (top-1, top-3) hits between consecutive runs of one pair, counted only
    where the index version and the question's labels stayed the same: anything else is a real change."""
    flips: Counter[str] = Counter()
    outcomes = [_current_outcomes(question_set, run) for run in oldest_first]
    for index in range(1, len(oldest_first)):
        if oldest_first[index].index_version != oldest_first[index - 1].index_version:
            continue
        before, after = outcomes[index - 1], outcomes[index]
        for question_id in after.keys() & before.keys():
            if any(before[question_id].hit_at(figure.k) != after[question_id].hit_at(figure.k) for figure in TESTED):
                flips[question_id] += 1
    return dict(flips)


def unstable_findings(question_set: GoldenQuestionSet, histories: Mapping[str, Sequence[RunResult]]) -> list[Finding]:
    """One finding per question, listing the flip count of every pair where it flipped at least twice."""
    per_question: dict[str, dict[str, int]] = {}
    for retriever, runs in histories.items():
        for question_id, count in flip_counts(question_set, runs).items():
            if count >= MIN_FLIPS:
                per_question.setdefault(question_id, {})[retriever] = count
    return [
        Finding(
            "unstable_question",
            WARNING,
            question.id,
            "hit flipped "
            + ", ".join(f"{n} times with {r}" for r, n in per_question[question.id].items())
            + " while the set and the index stayed the same",
            (("flips", per_question[question.id]),),
        )
        for question in question_set.questions
        if question.id in per_question
    ]
