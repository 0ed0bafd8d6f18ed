"""A history chart's figures come from the stored summaries: the last runs, the baseline, what regressed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from core_helpers import question, question_set, retriever_for, run_from_codes, utc

from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.chart_data import history_chart_data
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

KEY = HistoryKey("demo.set", "fixed")


@pytest.fixture
def store(tmp_path):
    return ResultStore(str(tmp_path / "results"))


def save_runs(store, codes_list):
    runs = [run_from_codes(codes, run_at=utc(2026, 11, 1) + timedelta(days=day)) for day, codes in enumerate(codes_list)]
    for run in runs:
        store.save(run)
    return runs


def test_points_are_the_last_runs_oldest_first_with_every_cutoff_rate(store):
    runs = save_runs(store, ["1111", "1133", "11--", "1111"])
    data = history_chart_data(store, KEY, Tolerances(), runs=3)
    assert [p.run_id for p in data.points] == [r.run_id for r in runs[1:]]
    assert data.points[0].rates[:2] == (("top-1", 0.5), ("top-3", 1.0))
    assert data.metrics == ["top-1", "top-3", "mrr@3", "ndcg@3"]  # ranking metrics beside the rates


def test_a_drop_beyond_the_tolerance_is_marked_regressed_and_an_errored_run_incomplete(store):
    save_runs(store, ["1111", "111-", "1E11", "1---", "1111"])
    data = history_chart_data(store, KEY, Tolerances(max_top1_drop=0.3, max_top3_drop=0.3))
    assert [(p.complete, p.regressed) for p in data.points] == [
        (True, False),
        (True, False),  # -25 pp: within 30 pp
        (False, False),  # never compared
        (True, True),  # -50 pp against the run before the incomplete one
        (True, False),
    ]


def test_a_drop_equal_to_the_tolerance_is_not_marked(store):
    save_runs(store, ["1111", "111-"])
    (_, second) = history_chart_data(store, KEY, Tolerances(max_top1_drop=0.25, max_top3_drop=0.25)).points
    assert not second.regressed


def test_the_baseline_is_the_run_the_newest_was_compared_with_and_its_band_uses_the_tolerances(store):
    first, second, broken = save_runs(store, ["1111", "11--", "E111"])
    data = history_chart_data(store, KEY, Tolerances(max_top1_drop=0.05, max_top3_drop=0.2))
    assert data.baseline.run_id == second.run_id and data.baseline_index == 1
    assert (data.tolerance("top-1"), data.tolerance("top-3"), data.tolerance("top-5")) == (0.05, 0.2, None)


def test_a_pinned_baseline_older_than_the_shown_runs_is_still_given(store):
    first, *_ = save_runs(store, ["1111", "11--", "111-", "1---"])
    data = history_chart_data(store, KEY, Tolerances(), runs=2, baseline_run_id=first.run_id)
    assert data.baseline.run_id == first.run_id and data.baseline.rate("top-1") == 1.0
    assert data.baseline_index is None


def test_a_single_run_has_no_baseline_and_an_empty_history_no_points(store):
    save_runs(store, ["1111"])
    assert history_chart_data(store, KEY, Tolerances()).baseline is None
    assert history_chart_data(store, HistoryKey("demo.set", "nobody"), Tolerances()).points == ()


def test_a_stored_verdict_decides_over_todays_tolerances_and_a_set_edit_is_located(store):
    """Runs judged at the time (30 pp tolerance) keep their verdict when the chart uses 10 pp today."""
    questions = question_set(question("q1", ["d1"]), question("q2", ["d2"]), question("q3", ["d3"]), question("q4", ["d4"]))
    perfect = {f"q{i}": [f"d{i}"] for i in range(1, 5)}
    lenient = Tolerances(max_top1_drop=0.3, max_top3_drop=0.3)
    evaluate_and_record(questions, retriever_for(perfect, questions), store, EvaluationSettings(tolerances=lenient))
    evaluate_and_record(
        questions, retriever_for({**perfect, "q4": ["x"]}, questions), store, EvaluationSettings(tolerances=lenient)
    )
    edited = question_set(*questions.questions[:3], question("q4", ["d4"], text="reworded fourth question?"))
    evaluate_and_record(edited, retriever_for(perfect, edited), store, EvaluationSettings(tolerances=lenient))

    data = history_chart_data(store, KEY, Tolerances(max_top1_drop=0.1, max_top3_drop=0.1))

    assert [p.regressed for p in data.points] == [False, False, False]  # -25 pp passed its own check
    assert data.set_edits == [2]


def test_intervals_and_ranking_metrics_are_charted_when_the_stored_summaries_carry_them(store):
    """A summary written with Wilson intervals and ranking metrics (as newer runs store them) is charted
    with them; the runs stored without them still chart their rates."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    old, new = save_runs(store, ["1111", "113-"])
    files = {stored.run_id: store.summary_uri(stored) for stored in store.history(KEY)}
    figures = {
        "hit_rate_ci_low": [0.2, 0.4],
        "hit_rate_ci_high": [0.8, 0.95],
        "metric_names": ["mrr@12", "ndcg@12", "recall@3"],
        "metric_values": [0.6, 0.7, 0.75],
    }
    for run_id, written in ((old.run_id, {}), (new.run_id, figures)):  # the old one as stored before these figures
        row = {name: value for name, value in pq.read_table(files[run_id]).to_pylist()[0].items() if name not in figures}
        pq.write_table(pa.Table.from_pylist([row | written]), files[run_id])

    first, second = history_chart_data(store, KEY, Tolerances()).points

    assert first.intervals == () and first.rate("top-1") == 1.0
    assert second.interval("top-1") == (0.2, 0.8) and second.interval("top-3") == (0.4, 0.95)
    assert (second.rate("mrr@12"), second.rate("ndcg@12"), second.rate("recall@3")) == (0.6, 0.7, None)


def test_after_labels_grow_the_band_hangs_from_the_baseline_rate_the_newest_check_compared_with(store):
    """The chart of stored runs shows the baseline at 50%, as stored; its check compared the newest run
    with the baseline rescored under the new label (75%), so the tolerance band starts there, and says so."""
    rankings = {"q1": ["d1"], "q2": ["n2", "d2"], "q3": ["n3", "d3"], "q4": ["d4"]}
    before = question_set(*(question(f"q{i}", (f"d{i}",)) for i in range(1, 5)))
    after = question_set(*(question(f"q{i}", ("d2", "n2") if i == 2 else (f"d{i}",)) for i in range(1, 5)))
    evaluate_and_record(before, retriever_for(rankings, before), store, EvaluationSettings())
    evaluate_and_record(after, retriever_for(rankings, after), store, EvaluationSettings())

    stored = history_chart_data(store, KEY, Tolerances())
    rescored = history_chart_data(store, KEY, Tolerances(), labels=after)

    assert [point.rate("top-1") for point in stored.points] == [0.5, 0.75]
    assert (stored.baseline.rate("top-1"), stored.baseline_rate("top-1"), stored.baseline_rate("top-3")) == (0.5, 0.75, 1.0)
    assert stored.rescored_baseline == {"top-1": 0.75, "top-3": 1.0}
    assert [point.rate("top-1") for point in rescored.points] == [0.75, 0.75]
    assert rescored.baseline_rate("top-1") == 0.75
