"""The terminal's figures by turn: `compare` shows the turn depths and the gap beside the rewrite run, and
the nightly leaderboard a table by depth for a set of conversations."""

from __future__ import annotations

from io import StringIO

from rich.console import Console

from retrieval_pipeline.cli.render.compare import print_comparison
from retrieval_pipeline.cli.render.nightly_report import print_depths
from retrieval_pipeline.core.scoring.checks.comparison import compare_runs
from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
from retrieval_pipeline.core.services.evaluation.leaderboard import build_leaderboard
from retrieval_pipeline.core.services.evaluation.leaderboard_turns import turn_entries
from retrieval_pipeline.core.services.views.comparison.view import comparison_view
from retrieval_pipeline.core.storage.store import ResultStore

RANKINGS = {"1": ("t", "x", "y"), "3": ("x", "y", "t"), "-": ("x", "y", "z")}


def conversation(retriever: str, codes: str, query_mode: str = "current") -> RunResult:
    """One conversation "wings", a turn per code ("1" top-1 hit, "3" top-3 only, "-" miss)."""
    turns = [
        QuestionResult(f"wings/{n}", "match", None, ("t",), RANKINGS[code], 1.0, conversation="wings", turn=n)
        for n, code in enumerate(codes, start=1)
    ]
    return RunResult("demo.conversations", retriever, turns, query_mode=query_mode, retriever_setup="sha256:bm25")


def printed(draw) -> str:
    output = StringIO()
    draw(Console(file=output, width=200))
    return output.getvalue()


def test_compare_prints_the_turn_depths_and_each_runs_gap_beside_the_rewrite_run():
    view = comparison_view(compare_runs([conversation("bm25_current", "13-"), conversation("bm25_rewrite", "111", "rewrite")]))
    text = printed(lambda console: print_comparison(console, view, limit=10))
    assert "By turn depth" in text
    assert "`bm25_current` on the turns as asked against `bm25_rewrite` on their rewrites (3 turns): " in text
    assert "top-1 -66.7 pp, top-3 -33.3 pp" in text


def test_the_nightly_leaderboard_prints_a_conversational_sets_rates_by_depth(tmp_path):
    store = ResultStore(str(tmp_path))
    store.save(conversation("bm25_current", "13-1"))
    store.save(conversation("bm25_rewrite", "1111", "rewrite"))
    board = build_leaderboard(store)
    text = printed(
        lambda console: print_depths(console, "demo.conversations", turn_entries(board.summaries("demo.conversations")))
    )
    assert "By turn depth (top-1 / top-3): demo.conversations" in text
    assert "0.0% / 100.0%" in text and "-50.0 pp / -25.0 pp" in text
