"""Baseline policy: under `accepted` a regression is not the next baseline until a person accepts it."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pyarrow.parquet as pq
import pytest
from core_helpers import question, question_set, retriever_for, utc

from retrieval_pipeline.core.base.errors import NotAcceptableError, UnknownIdentifierError
from retrieval_pipeline.core.scoring.checks.verdicts import Verdict
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.baselines import BaselinePolicy, accept_run, acceptances, latest_accepted_run_id
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy
from retrieval_pipeline.core.storage.retention import prune
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

NO_WAIT = EvaluationSettings(retry=RetryPolicy(attempts=1, backoff_seconds=0))
QS = question_set(*(question(f"q{i}", (f"d{i}",)) for i in range(1, 5)))
KEY = HistoryKey("demo.set", "fixed")
GOOD = {f"q{i}": [f"d{i}"] for i in range(1, 5)}
WORSE = {**GOOD, "q1": ["x"], "q2": ["x"]}


class Failing:
    identifier = "fixed"

    def retrieve(self, question: str, limit: int):
        raise RuntimeError("search service down")


@pytest.fixture
def store(tmp_path):
    return ResultStore(str(tmp_path / "results"))


def evaluate(store, rankings, policy=BaselinePolicy.ACCEPTED, retriever=None):
    return evaluate_and_record(QS, retriever or retriever_for(rankings, QS), store, replace(NO_WAIT, baseline_policy=policy))


def test_under_accepted_a_regression_is_not_the_baseline_until_accepted_then_it_is(store):
    good = evaluate(store, GOOD)
    regressed = evaluate(store, WORSE)
    assert regressed.report.verdict is Verdict.REGRESSION

    again = evaluate(store, WORSE)  # the next night: still compared with the good run, still failing
    assert again.report.baseline_run_id == good.run.run_id
    assert again.report.is_regression

    accept_run(store, KEY, regressed.run.run_id, "ann", now=utc(2030, 1, 1))
    after = evaluate(store, WORSE)
    assert after.report.baseline_run_id == regressed.run.run_id
    assert after.report.verdict is Verdict.PASS
    assert [(a.run_id, a.accepted_by) for a in acceptances(store, KEY).values()] == [(regressed.run.run_id, "ann")]


def test_under_previous_a_regression_becomes_the_next_baseline_as_before(store):
    evaluate(store, GOOD, BaselinePolicy.PREVIOUS)
    regressed = evaluate(store, WORSE, BaselinePolicy.PREVIOUS)
    assert evaluate(store, WORSE, BaselinePolicy.PREVIOUS).report.baseline_run_id == regressed.run.run_id


def test_each_run_stores_its_verdict_and_the_baseline_it_was_compared_with(store):
    good = evaluate(store, GOOD)
    regressed = evaluate(store, WORSE)
    incomplete = evaluate(store, GOOD, retriever=Failing())
    rows = [store.read_summary(e.stored) for e in (good, regressed, incomplete)]
    assert [(r["verdict"], r["baseline_run_id"]) for r in rows] == [
        ("baseline", None),
        ("regression", good.run.run_id),
        ("incomplete", good.run.run_id),
    ]


def test_accepting_an_unknown_or_incomplete_run_records_nothing(store, tmp_path):
    evaluate(store, GOOD)
    incomplete = evaluate(store, GOOD, retriever=Failing())
    with pytest.raises(UnknownIdentifierError, match="unknown run of demo.set/fixed/retrieval_hit_rate 'nope'"):
        accept_run(store, KEY, "nope", "ann")
    with pytest.raises(
        NotAcceptableError, match=f"run {incomplete.run.run_id} of demo.set/fixed/retrieval_hit_rate is incomplete"
    ):
        accept_run(store, KEY, incomplete.run.run_id, "ann")
    assert not (tmp_path / "results" / "acceptances").exists()


def test_acceptances_are_appended_as_files_and_never_rewrite_a_run(store, tmp_path):
    good = evaluate(store, GOOD)
    regressed = evaluate(store, WORSE)
    summary = pq.read_table(store.summary_uri(regressed.stored))
    accept_run(store, KEY, regressed.run.run_id, "ann", now=utc(2030, 1, 1))
    accept_run(store, KEY, good.run.run_id, None, now=utc(2030, 1, 2))
    files = sorted((tmp_path / "results" / "acceptances" / "demo.set" / "fixed" / "retrieval_hit_rate").iterdir())
    assert len(files) == 2
    rows = [pq.read_table(path).to_pylist()[0] for path in files]
    assert [(row["run_id"], row["accepted_by"]) for row in rows] == [(regressed.run.run_id, "ann"), (good.run.run_id, None)]
    assert pq.read_table(store.summary_uri(regressed.stored)).equals(summary)


def test_a_pinned_baseline_wins_over_the_policy(store):
    good = evaluate(store, GOOD)
    evaluate(store, GOOD)
    pinned = evaluate_and_record(
        QS,
        retriever_for(GOOD, QS),
        store,
        replace(NO_WAIT, baseline_policy=BaselinePolicy.ACCEPTED, baseline_run_id=good.run.run_id),
    )
    assert pinned.report.baseline_run_id == good.run.run_id


def test_a_run_stored_before_verdicts_counts_as_accepted(store):
    legacy = evaluate(store, WORSE, BaselinePolicy.PREVIOUS)
    table = pq.read_table(store.summary_uri(legacy.stored))
    pq.write_table(table.drop_columns(["verdict", "baseline_run_id"]), store.summary_uri(legacy.stored))
    assert evaluate(store, GOOD).report.baseline_run_id == legacy.run.run_id


def test_retention_keeps_the_latest_accepted_run_however_old(store):
    good = evaluate(store, GOOD)
    for _ in range(2):
        evaluate(store, WORSE)
    removed = prune(store, timedelta(0), now=utc(2100, 1, 1), protected=lambda key: latest_accepted_run_id(store, key)).runs
    kept = [run.run_id for run in store.history(KEY)]
    assert good.run.run_id in kept and len(kept) == 2 and len(removed) == 1
    assert evaluate(store, WORSE).report.baseline_run_id == good.run.run_id
