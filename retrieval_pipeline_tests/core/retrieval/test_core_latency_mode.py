"""A run records what its latencies are: per-question timings, or a batch's time shared by its questions."""

from __future__ import annotations

import pytest
from core_helpers import RankingRetriever, question, question_set

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.services.evaluation.runner import run_question_set
from retrieval_pipeline.core.storage.store import ResultStore

SET = question_set(question("q1", ("a",), text="one"), question("q2", ("b",), text="two"), question("q3", ("c",), text="three"))
RANKINGS = {"one": ["a"], "two": ["x", "b"], "three": ["z"]}


class BatchRankingRetriever(RankingRetriever):
    """The same answers through a batch call, as the lexical and run-file retrievers give them."""

    def retrieve_batch(self, questions, limit):
        return [self.retrieve(text, limit) for text in questions]


def test_a_retriever_asked_one_question_at_a_time_has_percentiles():
    run = run_question_set(SET, RankingRetriever(RANKINGS))
    assert run.latency_mode == "per_question"
    assert set(run.latency_summary()) == {"p50", "p90", "p95", "p99", "max"}


def test_a_batch_retriever_has_only_its_mean_per_question_under_that_name():
    run = run_question_set(SET, BatchRankingRetriever(RANKINGS))
    assert run.latency_mode == "batch_mean"
    assert run.latency_percentiles() == {}  # identical values for every question: no percentile means anything
    [(name, mean)] = run.latency_summary().items()
    assert name == "batch_mean" and mean == pytest.approx(sum(q.latency_ms for q in run.questions) / 3)


def test_a_p95_tolerance_for_a_batch_retriever_is_refused_before_a_question_is_asked(tmp_path):
    retriever = BatchRankingRetriever(RANKINGS)
    store = ResultStore(str(tmp_path / "results"))
    with pytest.raises(InvalidInputError, match="max_p95_latency_increase_ms.*answers in batches"):
        evaluate_and_record(SET, retriever, store, EvaluationSettings(tolerances=Tolerances(max_p95_latency_increase_ms=5.0)))
    assert retriever.calls == [] and not (tmp_path / "results").exists()


def test_an_unknown_latency_mode_is_refused():
    from retrieval_pipeline.core.scoring.results import RunResult

    with pytest.raises(ValueError, match="latency_mode"):
        RunResult("demo.set", "fixed", (), latency_mode="p95ish")
