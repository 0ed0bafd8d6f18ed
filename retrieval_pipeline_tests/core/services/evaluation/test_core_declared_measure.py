"""A measure declared once (scoring/measures.py), with no other edit, is stored with every run and shows
in the history, the leaderboard (its Markdown and its table) and the history chart."""

from __future__ import annotations

import pytest
from core_helpers import run_from_codes
from measure_helpers import declare, throwaway_measure

from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.services.evaluation.chart_data import history_chart_data
from retrieval_pipeline.core.services.evaluation.history import run_history
from retrieval_pipeline.core.services.evaluation.leaderboard import build_leaderboard
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

KEY = HistoryKey("demo.set", "fixed")


@pytest.fixture
def store(tmp_path, monkeypatch):
    declare(monkeypatch, throwaway_measure(charted=True))
    store = ResultStore(str(tmp_path / "results"))
    store.save(run_from_codes("13--"))
    return store


def test_a_declared_measure_is_stored_and_read_back_with_the_history(store):
    [entry] = run_history(store, KEY)
    assert entry.summary.figures["throwaway@3"] == pytest.approx(0.25)


def test_a_declared_headline_measure_is_a_leaderboard_column(store):
    board = build_leaderboard(store)
    assert "| mrr@3 | ndcg@3 | judged@3 | throwaway@3 | latency ms |" in board.to_markdown()
    assert "| 0.250 |" in board.to_markdown()
    assert board.to_table().to_pylist()[0]["throwaway@3"] == pytest.approx(0.25)


def test_a_declared_charted_measure_is_a_line_of_the_history_chart(store):
    data = history_chart_data(store, KEY, Tolerances())
    assert data.metrics == ["top-1", "top-3", "mrr@3", "ndcg@3", "throwaway@3"]
    assert data.points[0].rate("throwaway@3") == pytest.approx(0.25)
