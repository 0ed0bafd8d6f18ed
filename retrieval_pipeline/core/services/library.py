"""The library face: `retrieval_pipeline.evaluate` and `retrieval_pipeline.compare`, the command line's
`run` and `compare` for a notebook or a script, returning the views every output lays out.

A set and a retriever are given as objects or as identifiers of the configuration (`config`: a path or a
loaded `ProjectConfig`; by default the one the command line would find). Without a `store` nothing is
saved and nothing is compared with a baseline; with one, each run is saved and judged as `run` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from retrieval_pipeline.core.golden.machine_labels import scored_under
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.retrieval.retriever import Retriever
from retrieval_pipeline.core.scoring.checks.comparison import compare_runs
from retrieval_pipeline.core.scoring.stats.intervals import DEFAULT_SIGNIFICANCE
from retrieval_pipeline.core.scoring.traffic import weighted_figures
from retrieval_pipeline.core.services.configuration.lookup import default_config_path
from retrieval_pipeline.core.services.configuration.project import ProjectConfig, load_config
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.record import Evaluation, evaluate_and_record, judge, scored_run, weighed
from retrieval_pipeline.core.services.evaluation.runner import Progress
from retrieval_pipeline.core.services.generated.split import split_generated
from retrieval_pipeline.core.services.views.comparison.view import comparison_view
from retrieval_pipeline.core.services.views.evaluation_view import evaluation_view
from retrieval_pipeline.core.storage.store import ResultStore

if TYPE_CHECKING:
    from retrieval_pipeline.core.scoring.results import RunResult
    from retrieval_pipeline.core.services.configuration.project import ProjectConfig
    from retrieval_pipeline.core.services.views.comparison.view import ComparisonView
    from retrieval_pipeline.core.services.views.evaluation_view import EvaluationView

Saved = tuple[str, str]
"""A saved run's id and its regression verdict's sentence."""


def evaluate(
    question_set: GoldenQuestionSet | str,
    retriever: Retriever | str,
    *,
    config: ProjectConfig | str | Path | None = None,
    store: ResultStore | str | None = None,
    settings: EvaluationSettings | None = None,
    progress: Progress | None = None,
) -> EvaluationView:
    """One run of `question_set` against `retriever`, as `retrieval-eval run` reports it. `settings` (by
    default the configuration's, or the defaults when neither is named) decide cut-offs and tolerances."""
    project = _project(config, question_set, retriever)
    settings = _settings(settings, project)
    store = _store(store)
    evaluation = evaluated(_set(question_set, project), _retriever(retriever, project), store, settings, progress)
    return evaluation_view(evaluation, settings, store.uri if store is not None else None)


def compare(
    question_set: GoldenQuestionSet | str,
    retrievers: Sequence[Retriever | str],
    *,
    config: ProjectConfig | str | Path | None = None,
    store: ResultStore | str | None = None,
    settings: EvaluationSettings | None = None,
) -> ComparisonView:
    """Retrievers side by side on `question_set`, the first the reference, as `retrieval-eval compare`
    shows them; with a `store`, each run is also saved with its regression check (`compare --save`)."""
    project = _project(config, question_set, *retrievers)
    settings = _settings(settings, project)
    store = _store(store)
    chosen = _set(question_set, project)
    runs, saved = [], {}
    for retriever in retrievers:
        evaluation = evaluated(chosen, _retriever(retriever, project), store, settings)
        runs.append(evaluation.run)
        if evaluation.stored is not None:
            saved[evaluation.run.retriever_identifier] = (evaluation.stored.run_id, evaluation.report.summary)
    return compared(runs, settings, saved if store is not None else None)


def evaluated(
    question_set: GoldenQuestionSet,
    retriever: Retriever,
    store: ResultStore | None,
    settings: EvaluationSettings,
    progress: Progress | None = None,
) -> Evaluation:
    """Saved and judged against its baseline with a store; without one, a fresh run judged against nothing."""
    if store is not None:
        return evaluate_and_record(question_set, retriever, store, settings, progress=progress)
    split = split_generated(scored_under(question_set, settings.labels))  # generated questions apart, as when stored
    run = scored_run(question_set if split is None else split.counted, retriever, settings, progress)
    report = judge(run, None, settings.tolerances)
    if split is not None:
        report = replace(report, summary=f"{report.summary} {split.note()}")
    return Evaluation(run, report, None, None, *weighed(settings.traffic, run, None))


def compared(runs: Sequence[RunResult], settings: EvaluationSettings, saved: dict[str, Saved] | None) -> ComparisonView:
    """`saved`: each retriever's stored run and verdict when the runs were saved, else None. With the
    settings' traffic, each run's weighted figures beside the plain ones."""
    comparison = compare_runs(
        runs,
        min_compared_questions=settings.tolerances.min_compared_questions,
        significance=settings.tolerances.min_significance or DEFAULT_SIGNIFICANCE,
    )
    traffic = settings.traffic
    weighted = [weighted_figures(run, traffic) for run in runs] if traffic is not None else None
    return comparison_view(comparison, saved, weighted)


def _project(config: ProjectConfig | str | Path | None, *given: object) -> ProjectConfig | None:
    """The configuration when one is named or an identifier needs it; None when objects say everything."""
    if isinstance(config, ProjectConfig):
        return config
    if config is None and not any(isinstance(value, str) for value in given):
        return None
    return load_config(config if config is not None else default_config_path())


def _settings(settings: EvaluationSettings | None, project: ProjectConfig | None) -> EvaluationSettings:
    if settings is not None:
        return settings
    return EvaluationSettings.from_config(project) if project is not None else EvaluationSettings()


def _store(store: ResultStore | str | None) -> ResultStore | None:
    return ResultStore(store) if isinstance(store, str) else store


def _set(question_set: GoldenQuestionSet | str, project: ProjectConfig | None) -> GoldenQuestionSet:
    return project.question_set(question_set) if isinstance(question_set, str) else question_set


def _retriever(retriever: Retriever | str, project: ProjectConfig | None) -> Retriever:
    return project.retriever(retriever) if isinstance(retriever, str) else retriever
