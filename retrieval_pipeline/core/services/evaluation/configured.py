"""A pair the configuration names, evaluated as every caller evaluates it: the settings `run`, `compare`
and the Dagster evaluation asset build alike, and the asset's whole evaluation.

The settings are the configuration's with what the caller alone knows (the command line's tolerance
options, a pinned baseline, `--labels`), weighted by the traffic of the log named (else the set's own
`traffic:` log), so a run is judged and weighted by the same rules whoever starts it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.record import Evaluation, evaluate_and_record
from retrieval_pipeline.core.services.traffic.weights import set_traffic
from retrieval_pipeline.core.storage.store import ResultStore


def configured_settings(
    config: ProjectConfig,
    question_set: GoldenQuestionSet,
    *,
    traffic_log: str | None = None,
    max_top1_drop: float | None = None,
    max_top3_drop: float | None = None,
    baseline_run_id: str | None = None,
    labels: str | None = None,
) -> EvaluationSettings:
    """Invalid tolerances are refused before the log is read."""
    settings = EvaluationSettings.from_config(
        config, max_top1_drop=max_top1_drop, max_top3_drop=max_top3_drop, baseline_run_id=baseline_run_id, labels=labels
    )
    return replace(settings, traffic=set_traffic(config, question_set, traffic_log))


def evaluate_configured(
    config: ProjectConfig,
    set_identifier: str,
    retriever_identifier: str,
    store: ResultStore,
    *,
    baseline_run_id: str | None = None,
    labels: str | None = None,
    traffic_log: str | None = None,
    build_progress: Callable[[str], None] | None = None,
) -> tuple[Evaluation, EvaluationSettings]:
    """The settings first (bad tolerances or an unreadable log cost no index build), then the retriever
    built (`build_progress` hears how it goes), evaluated and recorded; with the settings it was judged by."""
    question_set = config.question_set(set_identifier)
    settings = configured_settings(config, question_set, traffic_log=traffic_log, baseline_run_id=baseline_run_id, labels=labels)
    retriever = config.retriever(retriever_identifier, progress=build_progress)
    return evaluate_and_record(question_set, retriever, store, settings), settings
