"""The one operation the command line and Dagster share: load the baseline, evaluate, compare, save."""

from __future__ import annotations

from dataclasses import dataclass

from retrieval_pipeline.core.questions import GoldenQuestionSet
from retrieval_pipeline.core.regression import RegressionReport, Tolerances, detect_regression
from retrieval_pipeline.core.results import RunResult
from retrieval_pipeline.core.retriever import Retriever
from retrieval_pipeline.core.runner import Progress, RetryPolicy, run_question_set
from retrieval_pipeline.core.scoring import CutOffs
from retrieval_pipeline.core.store import HistoryKey, ResultStore, StoredRun


@dataclass(frozen=True)
class Evaluation:
    run: RunResult
    report: RegressionReport
    stored: StoredRun
    baseline: RunResult | None


def evaluate_and_record(
    question_set: GoldenQuestionSet,
    retriever: Retriever,
    store: ResultStore,
    *,
    tolerances: Tolerances = Tolerances(),
    cutoffs: CutOffs = CutOffs(),
    retry: RetryPolicy = RetryPolicy(),
    progress: Progress | None = None,
    baseline_run_id: str | None = None,
) -> Evaluation:
    """The baseline (the latest complete run, or the one pinned by `baseline_run_id`) is read before the
    run is saved, so a run never compares with itself, and an unknown pinned run fails before any work.
    An incomplete run is saved for inspection (see `judge`)."""
    baseline = store.baseline(HistoryKey(question_set.identifier, retriever.identifier), baseline_run_id)
    run = run_question_set(question_set, retriever, cutoffs=cutoffs, retry=retry, progress=progress)
    return Evaluation(run=run, report=judge(run, baseline, tolerances), stored=store.save(run), baseline=baseline)


def judge(run: RunResult, baseline: RunResult | None, tolerances: Tolerances) -> RegressionReport:
    """An incomplete run is compared with nothing: its errored questions are not misses, and treating
    them so would report a regression the retrieval did not make."""
    if run.complete:
        return detect_regression(run, baseline, tolerances)
    return RegressionReport(
        has_baseline=baseline is not None,
        is_regression=False,
        summary=f"Incomplete run: the retriever failed on {len(run.errored_question_ids)} question(s); "
        "stored for inspection, not compared and never used as a baseline.",
        baseline_run_id=baseline.run_id if baseline else None,
    )


def latest_evaluation(store: ResultStore, key: HistoryKey, tolerances: Tolerances = Tolerances()) -> Evaluation | None:
    """The key's latest stored run judged again against the run it was compared with (the latest complete
    run before it), for reports made after the fact; None before the key's first run."""
    history = store.history(key)
    if not history:
        return None
    latest = history[0]
    earlier = next((stored for stored in history[1:] if stored.complete), None)
    run = store.load(latest)
    baseline = store.load(earlier) if earlier is not None else None
    return Evaluation(run=run, report=judge(run, baseline, tolerances), stored=latest, baseline=baseline)
