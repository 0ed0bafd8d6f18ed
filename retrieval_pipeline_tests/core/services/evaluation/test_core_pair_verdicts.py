"""Every configured pair's latest verdict as its check stored it: what the leaderboard's check reports."""

from __future__ import annotations

from datetime import timedelta

import pyarrow.parquet as pq
import pytest
from core_helpers import run_from_codes, utc

from retrieval_pipeline.core.scoring.checks.regression import detect_regression, incomplete_report
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.results import GRADER
from retrieval_pipeline.core.services.evaluation.pair_verdicts import latest_verdicts
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

TOLERANCES = Tolerances(max_top1_drop=0.1, max_top3_drop=0.1)


@pytest.fixture
def store(tmp_path):
    return ResultStore(str(tmp_path / "results"))


def checked(store, retriever, codes_by_night):
    """Each night's run saved with its check against the night before, as `evaluate_and_record` saves it."""
    previous = None
    for night, codes in enumerate(codes_by_night):
        run = run_from_codes(codes, retriever_identifier=retriever, run_at=utc(2025, 3, 1) + timedelta(days=night))
        report = incomplete_report(run, previous) if not run.complete else detect_regression(run, previous, TOLERANCES)
        store.save(run, report)
        previous = run if run.complete else previous


def test_regressed_and_incomplete_pairs_fail_with_the_sentence_their_check_stored(store):
    checked(store, "steady", ["1111", "1111"])
    checked(store, "worse", ["1111", "11--"])
    checked(store, "broken", ["1111", "11EE"])
    verdicts = latest_verdicts(store, ["demo.set"], ["steady", "worse", "broken"])
    assert [(v.retriever_identifier, v.status, v.failed) for v in verdicts.verdicts] == [
        ("steady", "pass", False),
        ("worse", "regression", True),
        ("broken", "incomplete", True),
    ]
    worse, broken = verdicts.failed
    assert worse.sentence.startswith("Regression: top-1 hit rate dropped 50.0 pp")
    assert broken.sentence.startswith("Incomplete run: 2 of 4 questions failed")
    assert not verdicts.passed
    assert verdicts.sentence.startswith("2 of 3 pairs failed their latest check. demo.set × worse (regression): Regression")


def test_a_pair_never_evaluated_or_saved_without_a_check_does_not_fail(store):
    checked(store, "steady", ["1111"])
    store.save(run_from_codes("1---", retriever_identifier="imported", run_at=utc(2025, 3, 2)))
    verdicts = latest_verdicts(store, ["demo.set"], ["steady", "imported", "later"])
    assert [(v.status, v.failed, v.warned) for v in verdicts.verdicts] == [
        ("baseline", False, False),
        ("unchecked", False, False),
        ("not_evaluated", False, True),
    ]
    assert verdicts.passed
    assert verdicts.sentence == "No pair failed its latest check (3 pairs); flagged: demo.set × later (not evaluated yet)."


def test_a_run_stored_before_sentences_were_saved_is_named_by_its_verdict_and_baseline(store):
    checked(store, "worse", ["1111", "11--"])
    latest = store.history(HistoryKey("demo.set", "worse", GRADER))[0]
    table = pq.read_table(store.summary_uri(latest))
    pq.write_table(table.drop_columns(["verdict_summary"]), store.summary_uri(latest))
    [verdict] = latest_verdicts(store, ["demo.set"], ["worse"]).verdicts
    baseline = table.column("baseline_run_id")[0].as_py()
    assert (verdict.failed, verdict.sentence) == (True, f"regression against {baseline}")
