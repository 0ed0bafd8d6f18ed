"""The Dagster UI's metadata of a set of conversations: the rates by turn depth and the conversations all
hit on the evaluation, the check's deltas by depth, and the leaderboard by depth beside the rewrite run."""

from __future__ import annotations

from conversation_helpers import RANKINGS, conversation_run, conversation_set
from core_helpers import RankingRetriever

from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.leaderboard import build_leaderboard
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.services.views.evaluation_view import evaluation_view
from retrieval_pipeline.core.storage.store import ResultStore
from retrieval_pipeline.dagster_layer.metadata.evaluation import evaluation_metadata
from retrieval_pipeline.dagster_layer.metadata.project import leaderboard_metadata
from retrieval_pipeline.dagster_layer.metadata.regression import regression_metadata

SHAPE = {"a": 3, "b": 3}


def evaluated(store, codes: str):
    """The set asked of a retriever whose outcome on each turn, in set order, is `codes`."""
    question_set = conversation_set(SHAPE)
    rankings = {question.question: RANKINGS[code] for question, code in zip(question_set.questions, codes)}
    return evaluate_and_record(question_set, RankingRetriever(rankings, "bm25_current"), store, EvaluationSettings())


def test_an_evaluation_of_conversations_shows_its_rates_by_depth_and_its_conversations_all_hit(tmp_path):
    store = ResultStore(str(tmp_path))
    metadata = evaluation_metadata(evaluated(store, "113" + "1-1"), store, history_chart="")
    assert [row["key"] for row in metadata["by_turn_depth"].rows] == ["1", "2", "3"]
    assert metadata["by_turn_depth"].rows[1]["top1"] == "50.0%"
    assert metadata["conversations_all_hit@3"] == "50.0% (1/2) of conversations hit in the top 3 at every turn"
    assert list(metadata).index("by_turn_depth") == list(metadata).index("by_form") + 1  # beside by form


def test_the_check_of_a_run_of_conversations_shows_its_deltas_by_depth(tmp_path):
    store = ResultStore(str(tmp_path))
    evaluated(store, "111" + "111")
    view = evaluation_view(evaluated(store, "111" + "11-"))
    metadata = regression_metadata(view, EvaluationSettings().tolerances)
    deltas = {row["key"]: row["top1_change"] for row in metadata["by_turn_depth_deltas"].rows}
    assert deltas == {"1": "+0.0 pp", "2": "+0.0 pp", "3": "-50.0 pp"}
    assert "Drop confined to later turns" in metadata["verdict"]


def test_the_leaderboard_shows_each_retriever_by_depth_beside_the_rewrite_run(tmp_path):
    store = ResultStore(str(tmp_path))
    store.save(conversation_run({"a": "113", "b": "1-1"}))
    store.save(conversation_run({"a": "111", "b": "111"}, retriever="bm25_rewrite", rewrite=True))
    metadata = leaderboard_metadata(build_leaderboard(store), store.uri, "retrieval.yaml", chart=None)
    rows = {row["retriever"]: row for row in metadata["leaderboard_by_turn_depth"].rows}
    assert rows["bm25_current"]["depth_2"] == "50.0% / 50.0%"
    assert rows["bm25_current"]["rewrite_gap"] == "-33.3 pp / -16.7 pp"
    assert rows["bm25_rewrite"]["conversations_all_hit"] == "100.0%"
