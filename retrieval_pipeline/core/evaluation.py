"""The one operation the command line and Dagster share: load the baseline, evaluate, compare, save."""

from __future__ import annotations

from dataclasses import dataclass

from retrieval_pipeline.core.baselines import BaselinePolicy, load_baseline
from retrieval_pipeline.core.questions import GoldenQuestionSet
from retrieval_pipeline.core.regression import RegressionReport, Tolerances, detect_regression, incomplete_report
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
    baseline_policy: BaselinePolicy = BaselinePolicy.PREVIOUS,
) -> Evaluation:
    """The baseline (chosen by `baseline_policy`, or the run pinned by `baseline_run_id`) is read before
    the run is saved, so a run never compares with itself, and an unknown pinned run fails before any
    work. The verdict is saved with the run: under the `accepted` policy it decides whether the run can
    be the next baseline.

    An incomplete run is saved for inspection but compared with nothing (see `incomplete_report`).
    """
    key = HistoryKey(question_set.identifier, retriever.identifier)
    baseline = load_baseline(store, key, baseline_policy, baseline_run_id)
    run = run_question_set(question_set, retriever, cutoffs=cutoffs, retry=retry, progress=progress)
    report = detect_regression(run, baseline, tolerances) if run.complete else incomplete_report(run, baseline)
    stored = store.save(run, report)
    return Evaluation(run=run, report=report, stored=stored, baseline=baseline)
