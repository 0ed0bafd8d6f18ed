"""The one operation the command line and Dagster share: load the baseline, evaluate, compare, save."""

from __future__ import annotations

from dataclasses import dataclass

from retrieval_pipeline.core.errors import InvalidInputError
from retrieval_pipeline.core.questions import GoldenQuestionSet
from retrieval_pipeline.core.regression import RegressionReport, Tolerances, detect_regression
from retrieval_pipeline.core.latency import BATCH_MEAN
from retrieval_pipeline.core.results import RunResult
from retrieval_pipeline.core.retriever import Retriever
from retrieval_pipeline.core.runner import Progress, RetryPolicy, latency_mode, run_question_set
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

    An incomplete run is saved for inspection but compared with nothing: its errored questions are
    not misses, and treating them so would report a regression the retrieval did not make.
    """
    refuse_unmeasurable_tolerances(tolerances, retriever)
    baseline = store.baseline(HistoryKey(question_set.identifier, retriever.identifier), baseline_run_id)
    run = run_question_set(question_set, retriever, cutoffs=cutoffs, retry=retry, progress=progress)
    if run.complete:
        report = detect_regression(run, baseline, tolerances)
    else:
        report = RegressionReport(
            has_baseline=baseline is not None,
            is_regression=False,
            summary=f"Incomplete run: the retriever failed on {len(run.errored_question_ids)} question(s); "
            "stored for inspection, not compared and never used as a baseline.",
            baseline_run_id=baseline.run_id if baseline else None,
        )
    return Evaluation(run=run, report=report, stored=store.save(run), baseline=baseline)


def refuse_unmeasurable_tolerances(tolerances: Tolerances, retriever: Retriever) -> None:
    """A p95 tolerance on a retriever timed in batches would compare means under a percentile's name;
    refused before any question is asked or anything is read or saved."""
    if tolerances.max_p95_latency_increase_ms is not None and latency_mode(retriever) == BATCH_MEAN:
        raise InvalidInputError(
            f"retriever '{retriever.identifier}' answers in batches, so only a mean latency per question is "
            "measured and no p95 exists; remove this tolerance for it",
            key="tolerances",
            field="max_p95_latency_increase_ms",
        )
