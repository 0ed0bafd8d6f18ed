"""The one operation the command line and Dagster share: load the baseline, evaluate, compare, save."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.machine_labels import scored_under
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.retrieval.latency import BATCH_MEAN
from retrieval_pipeline.core.retrieval.retriever import Retriever
from retrieval_pipeline.core.scoring.checks.regression import detect_regression, incomplete_report
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.checks.verdicts import RegressionReport, Verdict
from retrieval_pipeline.core.scoring.rescoring import rescored
from retrieval_pipeline.core.scoring.results import RunResult, utc_now
from retrieval_pipeline.core.scoring.traffic import TrafficWeights, WeightedFigures, weighted_figures
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.baselines import load_baseline
from retrieval_pipeline.core.services.evaluation.runner import Progress, latency_mode, run_question_set
from retrieval_pipeline.core.services.generated.split import GeneratedSplit, sliced_run, split_generated
from retrieval_pipeline.core.services.labels.audit import unstable_question_ids
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore, StoredRun
from retrieval_pipeline.core.storage.stored_runs import recorded_tolerances, recorded_traffic


@dataclass(frozen=True)
class Evaluation:
    run: RunResult
    report: RegressionReport
    stored: StoredRun | None
    """None for a run evaluated without a store (the library's `evaluate` with no `store`)."""
    baseline: RunResult | None
    """As stored; the check compared with it rescored when questions were relabelled since (`report.rescored_baseline`)."""
    weighted: WeightedFigures | None = None
    """The run's traffic-weighted figures; None without a traffic log."""
    baseline_weighted: WeightedFigures | None = None
    """The baseline's, weighted by the same traffic, as the check compared it (rescored when it was)."""
    generated: Evaluation | None = None
    """The set's generated questions' own run (`<set>.generated`, generated/split.py); None without any."""


def evaluate_and_record(
    question_set: GoldenQuestionSet,
    retriever: Retriever,
    store: ResultStore,
    settings: EvaluationSettings,
    *,
    progress: Progress | None = None,
) -> Evaluation:
    """The baseline (the run `settings` pins, else the one its policy picks) is read before the run is
    saved, so a run never compares with itself, and an unknown pinned run or a store that cannot be written
    fails before any work. The verdict is saved with the run: under the `accepted` policy it decides whether
    the run can be the next baseline. A set's generated questions are kept apart (generated/split.py).

    An incomplete run is saved for inspection but compared with nothing (see `incomplete_report`); its
    summary names the most common error and how many questions it hit, the one sentence CLI and Dagster show.
    """
    refuse_unmeasurable_tolerances(settings, retriever)
    store.check_writable()
    question_set = scored_under(question_set, settings.labels)
    split = split_generated(question_set)
    if split is not None:
        return _evaluate_split(split, retriever, store, settings, progress)
    before = _before(store, question_set, retriever.identifier, settings)  # before the run: never compared with itself
    return _recorded(scored_run(question_set, retriever, settings, progress), before, store, settings)


@dataclass(frozen=True)
class _Before:
    """What a run is judged by, read before it is saved so that it never compares with itself."""

    question_set: GoldenQuestionSet
    baseline: RunResult | None
    unstable: frozenset[str]


def _before(store: ResultStore, question_set: GoldenQuestionSet, retriever: str, settings: EvaluationSettings) -> _Before:
    key = HistoryKey(question_set.identifier, retriever)
    baseline = load_baseline(store, key, settings.baseline_policy, settings.baseline_run_id)
    window = settings.unstable_window
    return _Before(question_set, baseline, unstable_question_ids(store, key, question_set, window) if window else frozenset())


def _recorded(
    run: RunResult, before: _Before, store: ResultStore, settings: EvaluationSettings, note: str | None = None
) -> Evaluation:
    """Judged, its verdict's sentence ended by `note`, and saved."""
    report = judge(run, before.baseline, settings.tolerances, before.unstable, before.question_set, settings.traffic)
    if note is not None:
        report = replace(report, summary=f"{report.summary} {note}")
    weighted, baseline_weighted = weighed(settings.traffic, run, compared_baseline(report, before.baseline))
    stored = store.save(run, report, settings.tolerances, weighted)
    return Evaluation(run, report, stored, before.baseline, weighted, baseline_weighted)


def _evaluate_split(
    split: GeneratedSplit, retriever: Retriever, store: ResultStore, settings: EvaluationSettings, progress: Progress | None
) -> Evaluation:
    """One pass, stored as the set's run (its verdict saying whether generated questions count) and as the
    generated slice's, which gates nothing: no traffic, pinned baseline or unstable questions of its own."""
    before = _before(store, split.counted, retriever.identifier, settings)
    apart = replace(settings, traffic=None, baseline_run_id=None, unstable_window=None)
    generated = split.generated
    before_apart = _before(store, generated, retriever.identifier, apart) if generated is not None else None
    run = scored_run(split.asked, retriever, settings, progress)
    evaluation = _recorded(sliced_run(run, split.counted, run.run_id), before, store, settings, split.note())
    if generated is None:
        return evaluation
    return replace(evaluation, generated=_recorded(sliced_run(run, generated), before_apart, store, apart))


NOT_RECORDED = "stopped (Ctrl-C or an error) before its orchestrator recorded it; kept for inspection, never a baseline"


@contextmanager
def incomplete_unless_recorded(store: ResultStore, key: HistoryKey) -> Iterator[None]:
    """A run saved inside the block whose recording is then stopped (an interrupt, an error) is kept as
    incomplete: a complete run nobody recorded would silently become the next baseline."""
    started = utc_now()
    try:
        yield
    except BaseException:
        for stored in store.saved_since(key, started):
            if stored.complete:
                store.mark_incomplete(stored, NOT_RECORDED)
        raise


def compared_baseline(report: RegressionReport, baseline: RunResult | None) -> RunResult | None:
    """The baseline as the check compared it: rescored under the current labels when it was."""
    return report.rescored_baseline.rescored if report.rescored_baseline is not None else baseline


def weighed(
    traffic: TrafficWeights | None, run: RunResult, baseline: RunResult | None
) -> tuple[WeightedFigures | None, WeightedFigures | None]:
    """The run's and its baseline's weighted figures under the same traffic; (None, None) without any."""
    if traffic is None:
        return None, None
    return weighted_figures(run, traffic), weighted_figures(baseline, traffic) if baseline is not None else None


def scored_run(
    question_set: GoldenQuestionSet, retriever: Retriever, settings: EvaluationSettings, progress: Progress | None = None
) -> RunResult:
    """The set asked and scored under the settings' labels (`question_set` already is, or is turned into,
    the set those labels make), the run saying which."""
    scored = scored_under(question_set, settings.labels)
    run = run_question_set(
        scored,
        retriever,
        cutoffs=settings.cutoffs,
        retry=settings.retry,
        progress=progress,
        queries=settings.query_plan(retriever.identifier),
    )
    return replace(run, labels=settings.labels)


def judge(
    run: RunResult,
    baseline: RunResult | None,
    tolerances: Tolerances,
    unstable: frozenset[str] = frozenset(),
    labels: GoldenQuestionSet | None = None,
    traffic: TrafficWeights | None = None,
) -> RegressionReport:
    """An incomplete run is saved for inspection but compared with nothing (see `incomplete_report`);
    given the set the run measured (`labels`), the baseline is rescored under its labels."""
    if not run.complete:
        return incomplete_report(run, baseline)
    return detect_regression(run, baseline, tolerances, unstable, labels, traffic)


def latest_evaluation(
    store: ResultStore,
    key: HistoryKey,
    tolerances: Tolerances = Tolerances(),
    labels: GoldenQuestionSet | None = None,
    *,
    rejudge: bool = False,
    choice: str | None = None,
    traffic: TrafficWeights | None = None,
) -> Evaluation | None:
    """The key's latest stored run, for reports made after the fact, against the run its check compared it
    with (stored with it; for a run saved without a check, the latest complete run before it), rescored
    under `labels` as the check did. None before the key's first run.

    Its verdict is the one recorded with the run, the one CI acted on; the details are computed with the
    tolerances recorded with it (`tolerances` for a run saved before they were recorded). `rejudge` judges
    it again with `tolerances` instead: today's, which may say otherwise. Its weighted figures are weighted
    by `traffic` when given, else by the traffic recorded with it (none for a run saved without a log).

    `choice` (a label choice, with `labels`): a run stored under the other choice is rescored under
    `labels` scored that way, and judged again (its recorded verdict was reached under other labels);
    one that cannot be rescored is refused, never shown as if scored so."""
    history = store.history(key)
    if not history:
        return None
    latest = history[0]
    row = store.read_summary(latest)
    if row["baseline_run_id"] is not None:
        earlier = next((stored for stored in history if stored.run_id == row["baseline_run_id"]), None)
    else:
        earlier = next((stored for stored in history[1:] if stored.complete), None)
    run = store.load(latest)
    baseline = store.load(earlier) if earlier is not None else None
    if choice is not None and labels is not None:
        labels = scored_under(labels, choice)
        if run.labels != choice:
            run, rejudge = _rescored_as(run, labels, choice), True
    recorded = recorded_tolerances(row)
    traffic = traffic or recorded_traffic(row)
    report = judge(run, baseline, tolerances if rejudge or recorded is None else recorded, labels=labels, traffic=traffic)
    if not rejudge and row["verdict"] is not None:
        report = _as_recorded(report, Verdict(row["verdict"]), row["verdict_summary"])
    return Evaluation(run, report, latest, baseline, *weighed(traffic, run, compared_baseline(report, baseline)))


def _rescored_as(run: RunResult, labels: GoldenQuestionSet, choice: str) -> RunResult:
    rescoring = rescored(run, labels)
    if rescoring.refused is not None:
        raise InvalidInputError(
            f"run {run.run_id} was scored under {run.labels} labels and cannot be rescored under {choice}: {rescoring.refused}"
        )
    return replace(rescoring.run, labels=choice)


def _as_recorded(report: RegressionReport, verdict: Verdict, sentence: str | None) -> RegressionReport:
    """The report with the verdict the run's check recorded. A run recorded without its sentence (saved
    before sentences were) keeps today's sentence when it agrees, and says both when it does not."""
    if sentence is None and verdict is not report.verdict:
        sentence = (
            f"{verdict.value.replace('_', ' ').capitalize()} when checked (its tolerances were not recorded); "
            f"judged with today's: {report.summary}"
        )
    return replace(report, verdict=verdict, summary=sentence or report.summary)


def refuse_unmeasurable_tolerances(settings: EvaluationSettings, retriever: Retriever) -> None:
    """A p95 tolerance on a retriever timed in batches would compare means under a percentile's name;
    refused before any question is asked or anything is read or saved."""
    if settings.tolerances.max_p95_latency_increase_ms is not None and latency_mode(retriever) == BATCH_MEAN:
        raise InvalidInputError(
            f"retriever '{retriever.identifier}' answers in batches, so only a mean latency per question is "
            "measured and no p95 exists; remove this tolerance for it",
            source=settings.tolerances_source,
            key="tolerances",
            field="max_p95_latency_increase_ms",
        )
