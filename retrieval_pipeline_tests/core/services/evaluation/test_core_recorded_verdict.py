"""A report made later shows the verdict recorded with the run (the one CI acted on), not today's; a run
that Dagster never recorded is kept as incomplete and is never a baseline."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from core_helpers import question, question_set, retriever_for

from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.checks.verdicts import Verdict
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record, latest_evaluation
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

QS = question_set(question("q1"), question("q2"), question("q3"), question("q4"))
GOOD = {"q1": ["t"], "q2": ["t"], "q3": ["t"], "q4": ["t"]}
WORSE = {"q1": ["t"], "q2": ["t"], "q3": ["x"], "q4": ["x"]}  # top-1 and top-3 drop 50 pp
KEY = HistoryKey("demo.set", "fixed")
STRICT = EvaluationSettings(
    tolerances=Tolerances(max_top1_drop=0.1, max_top3_drop=0.1), retry=RetryPolicy(attempts=1, backoff_seconds=0)
)
LENIENT = EvaluationSettings(
    tolerances=Tolerances(max_top1_drop=0.6, max_top3_drop=0.6), retry=RetryPolicy(attempts=1, backoff_seconds=0)
)


@pytest.fixture
def store(tmp_path):
    return ResultStore(str(tmp_path / "results"))


def record_drop(store, settings):
    evaluate_and_record(QS, retriever_for(GOOD, QS), store, settings)
    return evaluate_and_record(QS, retriever_for(WORSE, QS), store, settings)


def test_the_recorded_regression_stands_under_relaxed_tolerances_unless_rejudged(store):
    gate = record_drop(store, STRICT)

    recorded = latest_evaluation(store, KEY, LENIENT.tolerances)
    rejudged = latest_evaluation(store, KEY, LENIENT.tolerances, rejudge=True)

    assert gate.report.verdict is Verdict.REGRESSION
    assert recorded.report.verdict is Verdict.REGRESSION and recorded.report.summary == gate.report.summary
    assert rejudged.report.verdict is Verdict.PASS


def test_a_run_stored_before_tolerances_were_recorded_keeps_its_verdict_and_says_todays_differs(store):
    gate = record_drop(store, LENIENT)
    summary_path = store.run_files(gate.stored)[0]
    older = pq.read_table(summary_path).drop_columns(["verdict_summary", "tolerances"])
    pq.write_table(older, summary_path)

    recorded = latest_evaluation(store, KEY, STRICT.tolerances)

    assert recorded.report.verdict is Verdict.PASS
    assert recorded.report.summary.startswith(
        "Pass when checked (its tolerances were not recorded); judged with today's: Regression"
    )


def test_a_run_marked_incomplete_is_never_the_baseline_and_keeps_its_questions(store):
    first = evaluate_and_record(QS, retriever_for(GOOD, QS), store, STRICT)
    second = evaluate_and_record(QS, retriever_for(GOOD, QS), store, STRICT)

    demoted = store.mark_incomplete(second.stored, "interrupted before Dagster recorded this run")

    assert [(run.run_id, run.complete) for run in store.history(KEY)] == [
        (second.stored.run_id, False),
        (first.stored.run_id, True),
    ]
    assert store.baseline(KEY).run_id == first.stored.run_id
    assert store.read_summary(demoted)["verdict_summary"] == "interrupted before Dagster recorded this run"
    assert store.load(demoted).question_count == 4
