"""The one operation the command line and Dagster share: load the baseline, evaluate, compare, save."""

from __future__ import annotations

from dataclasses import replace

import pytest
from core_helpers import question, question_set, retriever_for, run_from_codes

from retrieval_pipeline.core.base.errors import UnknownIdentifierError
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.scoring import CutOffs
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

NO_WAIT = EvaluationSettings(retry=RetryPolicy(attempts=3, backoff_seconds=0))
QS = question_set(
    question("q1", form="match", hard_class="normal"),
    question("q2", form="gap", hard_class="near-duplicate"),
    question("q3", form="gap"),
    question("q4", ()),
)
GOOD = {"q1": ["t"], "q2": ["t"], "q3": ["a", "t"], "q4": []}
WORSE = {"q1": ["t"], "q2": ["a", "b", "c"], "q3": ["a", "b", "c"], "q4": ["a"]}


@pytest.fixture
def store(tmp_path):
    return ResultStore(str(tmp_path / "results"))


def test_the_first_run_is_recorded_as_the_baseline(store):
    evaluation = evaluate_and_record(QS, retriever_for(GOOD, QS, "lexical"), store, NO_WAIT)
    assert evaluation.baseline is None
    assert evaluation.report.has_baseline is False
    assert evaluation.report.is_regression is False
    assert (evaluation.run.hit_rate(1), evaluation.run.hit_rate(3)) == (0.75, 1.0)
    assert store.history(HistoryKey("demo.set", "lexical")) == [evaluation.stored]


def test_the_second_run_compares_with_the_first_and_reports_deltas(store):
    first = evaluate_and_record(QS, retriever_for(GOOD, QS, "lexical"), store, NO_WAIT)
    second = evaluate_and_record(QS, retriever_for(WORSE, QS, "lexical"), store, NO_WAIT)
    assert second.baseline.run_id == first.run.run_id
    assert second.baseline == first.run
    report = second.report
    assert report.baseline_run_id == first.run.run_id
    assert report.hit_rate_delta(1) == pytest.approx(0.25 - 0.75)
    assert report.hit_rate_delta(3) == pytest.approx(0.25 - 1.0)
    assert report.is_regression is True
    assert report.flipped_to_miss == ("q2", "q3", "q4")
    assert {group.key: group.delta(1) for group in report.by_form} == {"match": -0.5, "gap": -0.5}


def test_a_run_never_compares_with_itself(store):
    """Identical retrievers twice: the baseline is the earlier run, read before the new one is saved."""
    first = evaluate_and_record(QS, retriever_for(GOOD, QS, "lexical"), store, NO_WAIT)
    second = evaluate_and_record(QS, retriever_for(GOOD, QS, "lexical"), store, NO_WAIT)
    assert second.baseline.run_id == first.run.run_id != second.run.run_id
    assert second.report.summary == "No regression: top-1 +0.0 pp, top-3 +0.0 pp."


def test_a_pinned_baseline_is_compared_with_instead_of_the_latest_run(store):
    good = evaluate_and_record(QS, retriever_for(GOOD, QS, "lexical"), store, NO_WAIT)
    evaluate_and_record(QS, retriever_for(WORSE, QS, "lexical"), store, NO_WAIT)  # the regressed run

    rerun = evaluate_and_record(QS, retriever_for(WORSE, QS, "lexical"), store, replace(NO_WAIT, baseline_run_id=good.run.run_id))

    assert rerun.baseline == good.run
    assert rerun.report.is_regression is True and rerun.report.baseline_run_id == good.run.run_id


def test_a_pinned_baseline_that_is_unknown_or_incomplete_fails_before_anything_is_saved(store):
    good = evaluate_and_record(QS, retriever_for(GOOD, QS, "lexical"), store, NO_WAIT)
    broken = run_from_codes("1E", retriever_identifier="lexical")
    store.save(broken)

    for run_id in ("20990101T000000000000Z-deadbeef", broken.run_id):
        with pytest.raises(UnknownIdentifierError, match=f"'{run_id}'.*; available: {good.run.run_id}"):
            evaluate_and_record(QS, retriever_for(GOOD, QS, "lexical"), store, replace(NO_WAIT, baseline_run_id=run_id))
    assert len(store.history(HistoryKey("demo.set", "lexical"))) == 2


def test_the_stored_run_round_trips(store):
    evaluation = evaluate_and_record(QS, retriever_for(GOOD, QS, "lexical"), store, NO_WAIT)
    assert store.load(evaluation.stored) == evaluation.run


def test_each_retriever_has_its_own_baseline(store):
    evaluate_and_record(QS, retriever_for(GOOD, QS, "lexical"), store, NO_WAIT)
    other = evaluate_and_record(QS, retriever_for(WORSE, QS, "vector"), store, NO_WAIT)
    assert other.baseline is None
    assert other.report.is_regression is False


def test_custom_tolerances_and_cutoffs_are_honoured(store):
    evaluate_and_record(QS, retriever_for(GOOD, QS, "lexical"), store, NO_WAIT)
    wide = Tolerances(max_top1_drop=0.5, max_top3_drop=0.75)
    second = evaluate_and_record(
        QS, retriever_for(WORSE, QS, "lexical"), store, replace(NO_WAIT, tolerances=wide, cutoffs=CutOffs((1, 3, 5)))
    )
    assert second.report.is_regression is False
    assert second.run.cutoffs == (1, 3, 5)
    assert store.load(second.stored).cutoffs == (1, 3, 5)


def test_a_negative_tolerance_fails_before_anything_runs_or_is_saved(store):
    retriever = retriever_for(GOOD, QS, "lexical")
    with pytest.raises(ValueError):
        evaluate_and_record(QS, retriever, store, replace(NO_WAIT, tolerances=Tolerances(max_top1_drop=-0.1)))
    assert retriever.calls == []
    assert store.keys() == []
