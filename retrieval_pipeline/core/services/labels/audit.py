"""The label audit of one golden set: its corpora and stored runs gathered, then judged by `label_audit`.

The CLI's `audit`, the Dagster `labels_exist` check and the `label_audit` asset all call `audit_set` (or,
for the blocking check alone, `missing_labels`), so they can never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from retrieval_pipeline.core.base.errors import RetrievalEvalError
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.retrieval.corpus import read_document_ids
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.services.labels.label_audit import (
    ERROR,
    MIN_FLIPS,
    Finding,
    empty_label_mix,
    flip_counts,
    labels_not_in_corpus,
    optimistic_rates,
    repeated_questions,
    suspect_findings,
    suspect_labels,
    unstable_findings,
)
from retrieval_pipeline.core.services.labels.set_power import SetPower, set_power
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

if TYPE_CHECKING:  # the evaluation imports this module for the gate; it need not load the configuration
    from retrieval_pipeline.core.services.configuration.project import ProjectConfig


@dataclass(frozen=True)
class AuditReport:
    set_identifier: str
    findings: tuple[Finding, ...]
    corpora: tuple[str, ...]
    """Where the documents came from: the set's own `corpus:` and every corpus-aware retriever."""
    retrievers: tuple[str, ...]
    """Retrievers whose latest complete run was judged; suspect labels need two or more."""
    optimistic_rates: dict[str, dict[str, float]]
    window: int
    power: SetPower | None = None
    """What the set can detect at 80% power, from its size and its history's flip rate."""

    @property
    def has_errors(self) -> bool:
        return any(finding.severity == ERROR for finding in self.findings)

    def of_kind(self, kind: str) -> tuple[Finding, ...]:
        return tuple(finding for finding in self.findings if finding.kind == kind)


def corpora_of(config: ProjectConfig, set_identifier: str) -> dict[str, frozenset[str]]:
    """Every corpus the configuration knows for this set, by where it came from.

    Nothing is built: corpus-aware kinds read their corpus's ids. A retriever whose configuration is
    refused is passed over: its own evaluation reports why, and one broken retriever must not make every
    label of every set look wrong.
    """
    corpora = {}
    own = config.set_corpus(set_identifier)
    if own is not None:
        corpora[f"set corpus {own}"] = read_document_ids(own, f"question_sets.{set_identifier}.corpus")
    return {**corpora, **retriever_corpora(config, config.retriever_identifiers)}


def retriever_corpora(config: ProjectConfig, identifiers: Iterable[str]) -> dict[str, frozenset[str]]:
    """The corpora of those configured retrievers whose kinds know them; one whose configuration is
    refused is passed over (its own evaluation reports why)."""
    corpora = {}
    for identifier in identifiers:
        try:
            documents = config.retriever_kind(identifier).corpus()
        except RetrievalEvalError:
            continue
        if documents is not None:
            corpora[identifier] = documents
    return corpora


def retriever_echoes(config: ProjectConfig) -> dict[str, tuple[str, ...]]:
    """Whose rankings each configured retriever repeats (a fusion's members). A retriever whose
    configuration is refused repeats none: its own evaluation reports why."""
    echoes = {}
    for identifier in config.retriever_identifiers:
        try:
            echoes[identifier] = config.retriever_kind(identifier).echoed()
        except RetrievalEvalError:
            echoes[identifier] = ()
    return echoes


def missing_labels(config: ProjectConfig, set_identifier: str) -> tuple[tuple[str, ...], list[Finding]]:
    """The corpora consulted and the labels none of them holds: what blocks an evaluation."""
    corpora = corpora_of(config, set_identifier)
    return tuple(corpora), labels_not_in_corpus(config.question_set(set_identifier), corpora)


def recent_complete_runs(store: ResultStore, key: HistoryKey, window: int) -> list[RunResult]:
    """The last `window` complete runs of a pair, oldest first."""
    complete = [stored for stored in store.history(key) if stored.complete][:window]
    return [store.load(stored) for stored in reversed(complete)]


def unstable_question_ids(store: ResultStore, key: HistoryKey, question_set: GoldenQuestionSet, window: int) -> frozenset[str]:
    """Questions of the set that flipped at least twice in the pair's last `window` complete runs."""
    flips = flip_counts(question_set, recent_complete_runs(store, key, window))
    return frozenset(question_id for question_id, count in flips.items() if count >= MIN_FLIPS)


def audit_set(
    config: ProjectConfig,
    store: ResultStore,
    set_identifier: str,
    retriever_identifiers: Sequence[str] | None = None,
    window: int | None = None,
) -> AuditReport:
    question_set = config.question_set(set_identifier)
    window = window or config.audit.unstable_window
    corpus_names, findings = missing_labels(config, set_identifier)
    findings += repeated_questions(question_set) + empty_label_mix(question_set)
    histories = {
        identifier: recent_complete_runs(store, HistoryKey(set_identifier, identifier), window)
        for identifier in (retriever_identifiers or config.retriever_identifiers)
    }
    latest = [runs[-1] for runs in histories.values() if runs]
    suspects = suspect_labels(question_set, latest, retriever_echoes(config))
    findings += suspect_findings(suspects) + unstable_findings(question_set, histories)
    return AuditReport(
        set_identifier=set_identifier,
        findings=tuple(findings),
        corpora=corpus_names,
        retrievers=tuple(run.retriever_identifier for run in latest),
        optimistic_rates=optimistic_rates(latest, suspects),
        window=window,
        power=set_power(question_set, histories, config.tolerances),
    )
