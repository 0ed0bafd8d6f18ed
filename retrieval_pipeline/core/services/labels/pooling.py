"""Pooling: the documents the retrievers ranked that nobody judged, gathered for a person to judge.

TREC builds its judgements this way: the top K of every run, each document once, judged by a person.
Here the runs are each retriever's latest stored run, and the labels are the set's as they are today
(expected and rejected ids), so a document judged since a run was stored is not asked about again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from retrieval_pipeline.core.base.errors import InvalidInputError, RetrievalEvalError, quoted
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.retrieval.query_modes import chat_history
from retrieval_pipeline.core.retrieval.rewriters import transcript
from retrieval_pipeline.core.scoring.results import GRADER, RunResult
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

TEXT_SHOWN = 500
"""Characters of a candidate's text a judging file holds: enough to judge most passages."""


@dataclass(frozen=True)
class Candidate:
    """One unjudged document of one question, with what a person needs to judge it."""

    question_id: str
    question: str
    expected_document_ids: tuple[str, ...]
    rejected_document_ids: tuple[str, ...]
    document_id: str
    ranked_by: tuple[tuple[str, int], ...]
    """(retriever, 1-based rank) for every run that ranked it in its top K."""
    expected_title: str = ""
    """The first labelled document's title, when a corpus knows it: what the question is known to be about."""
    title: str = ""
    text: str = ""
    conversation: str = ""
    """For a turn past a conversation's first, the turns before it (`user: ...`, `assistant: ...` lines):
    "and at supersonic speeds?" cannot be judged without them."""


def pool(question_set: GoldenQuestionSet, runs: Sequence[RunResult], depth: int) -> list[Candidate]:
    """Candidates in set order, then by best rank, each (question, document) once. Errored questions and
    questions since removed from the set contribute nothing."""
    if depth < 1:
        raise InvalidInputError(f"the pool depth must be at least 1, got {depth}", field="depth")
    present = {question.id for question in question_set.questions}
    found: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for run in runs:
        for outcome in run.questions:
            if outcome.error is not None or outcome.question_id not in present:
                continue
            judged = set(question_set.question(outcome.question_id).judged_document_ids)
            for rank, document_id in enumerate(outcome.retrieved_document_ids[:depth], start=1):
                if document_id not in judged:
                    found.setdefault((outcome.question_id, document_id), []).append((run.retriever_identifier, rank))
    order = {question.id: position for position, question in enumerate(question_set.questions)}
    keys = sorted(found, key=lambda key: (order[key[0]], min(rank for _, rank in found[key])))
    return [
        _candidate(question_set, question_id, document_id, tuple(found[(question_id, document_id)]))
        for question_id, document_id in keys
    ]


def _candidate(question_set: GoldenQuestionSet, question_id: str, document_id: str, ranked_by) -> Candidate:
    question = question_set.question(question_id)
    return Candidate(
        question_id=question_id,
        question=question.question,
        expected_document_ids=question.expected_document_ids,
        rejected_document_ids=question.rejected_document_ids,
        document_id=document_id,
        ranked_by=ranked_by,
        conversation=transcript(chat_history(question_set.history(question))),
    )


def with_texts(candidates: Sequence[Candidate], texts: Callable[[set[str]], Mapping[str, tuple[str, str]]]) -> list[Candidate]:
    """The candidates with their titles and texts (the first `TEXT_SHOWN` characters) and their questions'
    labelled titles, from `texts`: wanted ids to (title, text), for the ids some corpus holds."""
    wanted = {c.document_id for c in candidates} | {c.expected_document_ids[0] for c in candidates if c.expected_document_ids}
    known = texts(wanted)
    return [
        replace(
            candidate,
            title=known.get(candidate.document_id, ("", ""))[0],
            text=known.get(candidate.document_id, ("", ""))[1][:TEXT_SHOWN],
            expected_title=known.get(candidate.expected_document_ids[0], ("", ""))[0] if candidate.expected_document_ids else "",
        )
        for candidate in candidates
    ]


def latest_runs(store: ResultStore, set_identifier: str, retriever_identifiers: Sequence[str] = ()) -> list[RunResult]:
    """The latest readable run of each retriever on the set (default: every retriever with a run), in
    the order given; a named retriever without a run is refused, listing those with one."""
    stored = sorted(
        {key.retriever_identifier for key in store.keys() if key.set_identifier == set_identifier and key.grader == GRADER}
    )
    runs = []
    for identifier in retriever_identifiers or stored:
        run = store.first_readable(store.history(HistoryKey(set_identifier, identifier)))
        if run is None:
            raise InvalidInputError(
                f"no stored run of retriever {quoted(identifier)} on set {quoted(set_identifier)}; "
                f"retrievers with a run: {', '.join(stored) or 'none'}"
            )
        runs.append(run)
    if not runs:
        raise InvalidInputError(f"no stored run of set {quoted(set_identifier)} to pool: run a retriever on it first")
    return runs


def pool_latest(
    config: ProjectConfig, store: ResultStore, set_identifier: str, retrievers: Sequence[str], depth: int
) -> tuple[list[Candidate], list[RunResult]]:
    """The pool of the retrievers' latest runs, with texts from every configured retriever that knows its corpus."""
    runs = latest_runs(store, set_identifier, retrievers)
    candidates = pool(config.question_set(set_identifier), runs, depth)
    pooled = [run.retriever_identifier for run in runs]
    return with_texts(candidates, lambda wanted: corpus_texts(config, wanted, pooled)), runs


def corpus_texts(config: ProjectConfig, wanted: Collection[str], first: Sequence[str] = ()) -> dict[str, tuple[str, str]]:
    """(title, text) of the wanted ids from the `first` retrievers' corpora, then any other configured
    retriever's; one whose configuration is refused is passed over (its own evaluation says why)."""
    wanted = set(wanted)
    known: dict[str, tuple[str, str]] = {}
    for identifier in dict.fromkeys([*first, *config.retriever_identifiers]):
        if identifier in config.retriever_specs and len(known) < len(wanted):
            try:
                found = config.retriever_kind(identifier).corpus_texts(wanted - set(known)) or {}
            except RetrievalEvalError:
                continue
            known = {**found, **known}
    return known
