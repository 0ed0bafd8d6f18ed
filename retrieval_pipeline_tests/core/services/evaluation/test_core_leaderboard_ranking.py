"""The leaderboard's ranking key: top-1 unless the configuration's `leaderboard.rank_by` names another
declared figure, and every title says which one ranks."""

from __future__ import annotations

import pytest
import yaml
from core_helpers import run_from_codes, utc

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.scoring.measures import HIT_RATE, MEASURES, Figure
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.evaluation.leaderboard import build_leaderboard
from retrieval_pipeline.core.storage.store import ResultStore


@pytest.fixture
def store(tmp_path):
    """`precise` finds one answer at rank 1 and misses three; `broad` finds all four at ranks 2-3."""
    store = ResultStore(str(tmp_path / "results"))
    for codes, retriever in (("1---", "precise"), ("3333", "broad")):
        store.save(run_from_codes(codes, retriever_identifier=retriever, set_identifier="demo.set", run_at=utc(2025, 3, 1)))
    return store


def ranked(board) -> list[str]:
    return [entry.retriever_identifier for entry in board.for_set("demo.set")]


def test_the_leaderboard_ranks_by_top1_by_default_and_says_so(store):
    board = build_leaderboard(store)
    assert ranked(board) == ["precise", "broad"]
    assert "### `demo.set`, ranked by top-1" in board.to_markdown()


def test_a_configured_figure_ranks_the_leaderboard_and_is_named_in_its_title(store):
    board = build_leaderboard(store, rank_by=Figure(MEASURES["ndcg"], 3))
    assert ranked(board) == ["broad", "precise"]
    assert board.ranking == "ranked by ndcg@3"
    assert "### `demo.set`, ranked by ndcg@3" in board.to_markdown()


def test_a_ranking_figure_off_the_headline_still_gets_its_column(store):
    markdown = build_leaderboard(store, rank_by=Figure(MEASURES["recall"], 3)).to_markdown()
    assert "| recall@3 |" in markdown.splitlines()[2] + "|"


def write_config(tmp_path, **data):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"cutoffs": [1, 3, 10], **data}), encoding="utf-8")
    return path


def test_the_configuration_names_the_ranking_figure_by_key_or_by_measure_and_cutoff(tmp_path):
    assert load_config(write_config(tmp_path)).rank_by == Figure(HIT_RATE, 1)
    assert load_config(write_config(tmp_path, leaderboard={"rank_by": "ndcg@10"})).rank_by == Figure(MEASURES["ndcg"], 10)
    assert load_config(write_config(tmp_path, leaderboard={"rank_by": "hit_rate@3"})).rank_by == Figure(HIT_RATE, 3)


def test_an_unknown_ranking_figure_is_refused_in_one_line_listing_the_known_ones(tmp_path):
    path = write_config(tmp_path, leaderboard={"rank_by": "ndcg@5"})
    with pytest.raises(InvalidInputError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path.resolve()}: leaderboard: field 'rank_by': unknown figure 'ndcg@5'")
    assert "ndcg@10" in message and "top3" in message and "\n" not in message
