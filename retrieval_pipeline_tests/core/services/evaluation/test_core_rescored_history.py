"""`history --rescore` and the chart under today's labels: a label fix improves every past run instead
of breaking the history, and nothing stored is rewritten."""

from __future__ import annotations

import pytest
from core_helpers import question, question_set, retriever_for

from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.chart_data import history_chart_data
from retrieval_pipeline.core.services.evaluation.history import run_history
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.services.evaluation.rescored_history import rescored_history
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

NO_WAIT = EvaluationSettings(retry=RetryPolicy(attempts=1, backoff_seconds=0))
KEY = HistoryKey("demo.set", "fixed")
RANKINGS = {f"q{i}": [f"x{i}", f"d{i}"] for i in range(1, 5)}
WRONG = question_set(*(question(f"q{i}", (f"d{i}",)) for i in range(1, 5)))
FIXED = question_set(*(question(f"q{i}", (f"x{i}",) if i <= 2 else (f"d{i}",)) for i in range(1, 5)))


@pytest.fixture
def store(tmp_path):
    store = ResultStore(str(tmp_path / "results"))
    for labels in (WRONG, WRONG, FIXED):
        evaluate_and_record(labels, retriever_for(RANKINGS, labels), store, NO_WAIT)
    return store


def test_under_the_current_labels_a_label_fix_raises_every_past_run_and_no_delta_jumps(store):
    stored = run_history(store, KEY)
    rescored = rescored_history(store, KEY, FIXED)

    assert [entry.summary.hit_rate(1) for entry in stored] == [0.5, 0.0, 0.0]  # newest first: the fix shows as a jump
    assert [entry.summary.hit_rate(1) for entry in rescored] == [0.5, 0.5, 0.5]
    assert [entry.deltas.get("top1") for entry in rescored] == [0.0, 0.0, None]
    assert [entry.rescored for entry in rescored] == [(), ("q1", "q2"), ("q1", "q2")]
    assert [entry.summary.verdict for entry in rescored] == [entry.summary.verdict for entry in stored]


def test_rescoring_the_history_rewrites_no_stored_file(store, tmp_path):
    files = {path: path.read_bytes() for path in (tmp_path / "results").rglob("*") if path.is_file()}

    rescored_history(store, KEY, FIXED)

    assert {path: path.read_bytes() for path in (tmp_path / "results").rglob("*") if path.is_file()} == files


def test_a_question_removed_since_a_run_is_left_out_of_that_run_under_the_current_labels(store):
    fewer = question_set(*FIXED.questions[1:])

    oldest = rescored_history(store, KEY, fewer)[-1]

    assert oldest.summary.question_count == 3 and oldest.summary.hit_rate(1) == pytest.approx(1 / 3)


def test_the_history_chart_states_which_labels_it_uses(store):
    stored = history_chart_data(store, KEY, Tolerances())
    current = history_chart_data(store, KEY, Tolerances(), labels=FIXED)

    assert stored.labels == "labels as stored with each run"
    assert current.labels == "current labels, every run rescored"
    assert [point.rate("top-1") for point in current.points] == [0.5, 0.5, 0.5]
    assert [point.rate("top-1") for point in stored.points] == [0.0, 0.0, 0.5]
