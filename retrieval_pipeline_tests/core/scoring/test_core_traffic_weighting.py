"""Traffic-weighted figures on a real BM25 run of the embedded demo set, against numpy computed here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from retrieval_pipeline.core.scoring.checks.regression import detect_regression
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.checks.verdicts import Verdict
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.scoring import CutOffs
from retrieval_pipeline.core.scoring.set_versions import restrict
from retrieval_pipeline.core.scoring.stats.intervals import wilson_interval
from retrieval_pipeline.core.scoring.traffic import TrafficWeights, weighted_figures
from retrieval_pipeline.core.services.configuration.lookup import demo_config_path
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.evaluation.runner import run_question_set


@pytest.fixture(scope="module")
def demo_runs() -> tuple[RunResult, RunResult]:
    """The demo set through real BM25, stemmed and plain, at cut-offs 1, 3, 5, 10."""
    config = load_config(demo_config_path())
    question_set = config.question_set("demo.cranfield")
    cutoffs = CutOffs((1, 3, 5, 10))
    return tuple(
        run_question_set(question_set, config.retriever(name), cutoffs=cutoffs) for name in ("bm25_stemmed", "bm25_plain")
    )


def traffic_for(run: RunResult, seed: int = 7) -> TrafficWeights:
    """Skewed counts, a fifth of the questions with none."""
    counts = np.random.default_rng(seed).zipf(1.6, len(run.questions)).clip(max=5000)
    counts[::5] = 0
    return TrafficWeights("web", dict(zip(run.questions.ids, counts.tolist())), "sha256:abc")


def own_hits(run: RunResult, k: int) -> np.ndarray:
    """Hit at k, read question by question from the ids (the first expected id within the top k distinct)."""
    hits = []
    for question in run.questions:
        ranking = list(dict.fromkeys(doc for doc in question.retrieved_document_ids if doc))[:k]
        expected = set(question.expected_document_ids)
        hits.append(float(bool(expected & set(ranking)) if expected else not ranking))
    return np.array(hits)


def own_wilson(rate: float, n: float) -> tuple[float, float]:
    z = norm.ppf(0.975)
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_weighted_hit_rates_and_metrics_are_numpy_weighted_means_over_the_questions(demo_runs):
    run = demo_runs[0]
    traffic = traffic_for(run)
    weights = np.array([traffic.counts[i] for i in run.questions.ids], float)
    found = weighted_figures(run, traffic)
    for k in (1, 3, 5, 10):
        assert found.values[f"top{k}"] == pytest.approx(np.average(own_hits(run, k), weights=weights), abs=1e-12)
    assert run.complete  # the demo's BM25 answers every question: every score is a real one
    for key in ("mrr@10", "ndcg@10", "recall@10"):
        per_question = np.array([run.question_metrics[i][key] for i in run.questions.ids])
        assert found.values[key] == pytest.approx(np.average(per_question, weights=weights), abs=1e-12)
    assert found.total == int(weights.sum())
    assert found.values["top3"] != pytest.approx(run.hit_rate(3))  # the weighting changes the figure


def test_weighted_interval_is_wilson_over_kish_effective_sample_size(demo_runs):
    run = demo_runs[0]
    traffic = traffic_for(run)
    weights = np.array([traffic.counts[i] for i in run.questions.ids], float)
    found = weighted_figures(run, traffic)
    n_eff = weights.sum() ** 2 / (weights**2).sum()
    assert found.effective_questions == pytest.approx(n_eff)
    assert n_eff < len(run.questions)
    for k in (1, 3):
        rate = np.average(own_hits(run, k), weights=weights)
        assert found.intervals[f"top{k}"] == pytest.approx(own_wilson(rate, n_eff), abs=1e-12)


def test_equal_traffic_gives_exactly_the_plain_rates_and_intervals(demo_runs):
    run = demo_runs[0]
    found = weighted_figures(run, TrafficWeights("flat", {i: 3 for i in run.questions.ids}))
    for k in run.cutoffs:
        assert found.values[f"top{k}"] == pytest.approx(run.hit_rate(k), abs=1e-12)
        assert found.intervals[f"top{k}"] == pytest.approx(wilson_interval(run.hit_count(k), run.question_count), abs=1e-12)
    assert found.zero_traffic == ()


def test_questions_without_traffic_weigh_nothing_and_are_named(demo_runs):
    run = demo_runs[0]
    traffic = traffic_for(run)
    found = weighted_figures(run, traffic)
    silent = tuple(i for i in run.questions.ids if traffic.counts[i] == 0)
    assert found.zero_traffic == silent and len(silent) == math.ceil(len(run.questions) / 5)
    kept = restrict(run, [i for i in run.questions.ids if i not in silent])
    assert weighted_figures(kept, traffic).values == pytest.approx(found.values)
    unknown = weighted_figures(run, TrafficWeights("web", {run.questions.ids[0]: 4}))
    assert unknown.zero_traffic == tuple(run.questions.ids[1:])
    assert unknown.values["top1"] == own_hits(run, 1)[0]


def test_traffic_counts_must_be_whole_numbers_of_at_least_zero():
    with pytest.raises(ValueError, match="traffic of question 'q1' must be a whole number >= 0, got -1"):
        TrafficWeights("web", {"q1": -1})
    with pytest.raises(ValueError, match="got 1.5"):
        TrafficWeights("web", {"q1": 1.5})


def plain_and_weighted_verdicts(before: RunResult, after: RunResult, traffic: TrafficWeights, **tolerances):
    plain = detect_regression(after, before, Tolerances(**tolerances), traffic=traffic)
    weighted = detect_regression(after, before, Tolerances(**tolerances, weighted=True), traffic=traffic)
    return plain, weighted


def test_the_verdict_gates_weighted_rates_only_when_configured(demo_runs):
    stemmed, plain_bm25 = demo_runs
    before = RunResult(stemmed.set_identifier, "bm25", stemmed.questions, cutoffs=stemmed.cutoffs)
    after = RunResult(plain_bm25.set_identifier, "bm25", plain_bm25.questions, cutoffs=plain_bm25.cutoffs)
    lost = [i for i, b, a in zip(before.questions.ids, own_hits(before, 1), own_hits(after, 1)) if b and not a]
    assert lost, "the plain analyzer loses some top-1 hits of the stemmed one"
    # All traffic on the questions the plain analyzer loses: weighted top-1 falls from 100% to 0%.
    traffic = TrafficWeights("web", {i: 10 for i in lost}, None)
    plain_drop = before.hit_rate(1) - after.hit_rate(1)
    tolerance = round(plain_drop + 0.05, 2)
    plain, weighted = plain_and_weighted_verdicts(before, after, traffic, max_top1_drop=tolerance, max_top3_drop=1.0)
    assert plain.verdict is Verdict.PASS and "traffic-weighted" not in plain.summary
    assert weighted.verdict is Verdict.REGRESSION and weighted.weighted_gate
    assert weighted.summary.startswith("Regression, traffic-weighted by log 'web': top-1 hit rate dropped 100.0 pp")
    assert dict(weighted.weighted_deltas)["top1"] == pytest.approx(-1.0)
    assert dict(weighted.hit_rate_deltas)[1] == pytest.approx(-plain_drop)  # the plain change stays the plain one
    # The same traffic on questions both analyzers answer alike: the weighted gate passes.
    same = [i for i, b, a in zip(before.questions.ids, own_hits(before, 1), own_hits(after, 1)) if b == a]
    calm = TrafficWeights("web", {i: 10 for i in same})
    _, weighted = plain_and_weighted_verdicts(before, after, calm, max_top1_drop=0.0, max_top3_drop=1.0)
    assert weighted.verdict is Verdict.PASS
    assert weighted.summary.startswith("No regression, traffic-weighted by log 'web': top-1 +0.0 pp")


def test_weighted_gate_without_a_log_gates_the_plain_rates(demo_runs):
    stemmed = demo_runs[0]
    report = detect_regression(stemmed, stemmed, Tolerances(weighted=True))
    assert report.verdict is Verdict.PASS and not report.weighted_gate and report.weighted_deltas == ()
    assert report.summary == detect_regression(stemmed, stemmed, Tolerances()).summary


def test_the_weighted_switch_is_true_or_false_and_left_out_of_records_when_off():
    with pytest.raises(ValueError, match="weighted must be true or false, got 1"):
        Tolerances().replaced(weighted=1)
    assert "weighted" not in Tolerances().as_dict()
    assert Tolerances(weighted=True).as_dict()["weighted"] is True


def test_a_weighted_run_stored_reads_back_its_weights_and_figures_and_older_runs_read_without(tmp_path, demo_runs):
    import pyarrow.parquet as pq

    from retrieval_pipeline.core.services.evaluation.record import latest_evaluation
    from retrieval_pipeline.core.storage.run_schema import TRAFFIC_COLUMNS
    from retrieval_pipeline.core.storage.run_summary import RunSummary
    from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
    from retrieval_pipeline.core.storage.stored_runs import recorded_traffic

    run = demo_runs[0]
    traffic = traffic_for(run)
    store, key = ResultStore(str(tmp_path)), HistoryKey(run.set_identifier, run.retriever_identifier)
    weighted = weighted_figures(run, traffic)
    stored = store.save(run, detect_regression(run, None, Tolerances()), Tolerances(), weighted)
    row = store.read_summary(stored)
    assert recorded_traffic(row) == traffic
    summary = RunSummary.of(key, row)
    assert (summary.traffic_log, summary.traffic_fingerprint) == ("web", "sha256:abc")
    assert summary.weighted == weighted.values and summary.weighted_intervals["top3"] == weighted.intervals["top3"]
    assert latest_evaluation(store, key).weighted == weighted  # `report` weighs by the stored traffic

    older = store.save(demo_runs[1])
    path = next(tmp_path.glob(f"summaries/**/{older.file_name}"))
    pq.write_table(pq.read_table(path).drop_columns(list(TRAFFIC_COLUMNS)), path)  # as version 2 wrote it
    old_row = store.read_summary(older)
    assert recorded_traffic(old_row) is None
    old_summary = RunSummary.of(HistoryKey(run.set_identifier, demo_runs[1].retriever_identifier), old_row)
    assert old_summary.traffic_log is None and old_summary.weighted == {} and old_summary.weighted_intervals == {}
    assert store.load(older).hit_rate(3) == demo_runs[1].hit_rate(3)
