"""A key's history under today's labels: every shown run rescored from its stored ids (rescoring.py).

A label fix then improves the whole history instead of breaking it: the run before the fix and the run
after it are scored by the same labels. Each entry keeps its run's own verdict (what its check found at
the time), and its deltas are recomputed against its baseline, rescored too, on the questions both
share; the questions it could not rescore are named with why. The per-question files are read (a
rescored figure cannot come from a summary) and nothing is written.
"""

from __future__ import annotations

from dataclasses import replace

from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.rescoring import Rescoring, under_current_labels
from retrieval_pipeline.core.scoring.set_versions import restrict, set_changes
from retrieval_pipeline.core.services.evaluation.baselines import BaselinePolicy
from retrieval_pipeline.core.services.evaluation.history import HistoryEntry, run_history
from retrieval_pipeline.core.storage.run_schema import upgraded
from retrieval_pipeline.core.storage.run_summary import RunSummary
from retrieval_pipeline.core.storage.run_tables import summary_table
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.core.storage.store_files import summary_row


def rescored_history(
    store: ResultStore,
    key: HistoryKey,
    question_set: GoldenQuestionSet,
    limit: int | None = None,
    policy: BaselinePolicy = BaselinePolicy.PREVIOUS,
) -> list[HistoryEntry]:
    """`run_history`'s entries, each complete run's figures and deltas under `question_set`'s labels."""
    stored = {run.run_id: run for run in store.history(key)}
    rescorings: dict[str, Rescoring] = {}

    def rescoring_of(run_id: str) -> Rescoring:
        if run_id not in rescorings:
            rescorings[run_id] = under_current_labels(store.load(stored[run_id]), question_set)
        return rescorings[run_id]

    entries = []
    for entry in run_history(store, key, limit, policy):
        if not entry.summary.complete:
            entries.append(entry)
            continue
        rescoring = rescoring_of(entry.summary.run_id)
        summary = _summary(key, rescoring, entry.summary)
        baseline = entry.baseline_run_id
        deltas = _deltas(rescoring, rescoring_of(baseline)) if baseline in stored else {}  # a pruned baseline: none
        entries.append(
            replace(
                entry,
                summary=summary,
                deltas=deltas,
                rescored=rescoring.relabelled,
                not_rescored=rescoring.refused,
                not_rescored_questions=rescoring.not_rescored,
            )
        )
    return entries


def _summary(key: HistoryKey, rescoring: Rescoring, stored: RunSummary) -> RunSummary:
    """The rescored run's figures; its check's verdict and baseline as stored."""
    if rescoring.refused is not None:
        return stored
    fresh = RunSummary.of(key, upgraded(summary_row(summary_table(rescoring.run))))
    return replace(fresh, verdict=stored.verdict, baseline_run_id=stored.baseline_run_id, deltas={})


def _deltas(run: Rescoring, baseline: Rescoring) -> dict[str, float]:
    """Hit-rate changes on the questions both rescored runs hold unchanged, as a check measures them."""
    if run.refused is not None or baseline.refused is not None:
        return {}
    compared = set_changes(run.run, baseline.run).compared_ids
    now, then = restrict(run.run, compared), restrict(baseline.run, compared)
    return {figure.key: now.hit_rate(figure.k) - then.hit_rate(figure.k) for figure in TESTED}
