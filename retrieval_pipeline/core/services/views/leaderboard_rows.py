"""The leaderboard as rows of a table a person compares in a browser (the Dagster UI's `leaderboard`): each
tested rate and each ranking measure as its measure reads, latencies as numbers."""

from __future__ import annotations

from typing import Any

from retrieval_pipeline.core.golden.conversations import DEPTHS
from retrieval_pipeline.core.scoring.measures import HIT_RATE, TESTED, Measure
from retrieval_pipeline.core.services.evaluation.leaderboard import Leaderboard, LeaderboardEntry, figure_cells, recorded_figures
from retrieval_pipeline.core.services.evaluation.leaderboard_turns import turn_entries


def ranking_measures(board: Leaderboard) -> list[Measure]:
    """Each ranking measure some entry recorded, once: its depth may differ between sets, so a row
    shows it at its own run's deepest cut-off."""
    recorded = recorded_figures(board.entries, headline=True)
    return list({figure.measure.name: figure.measure for figure in recorded if figure.measure is not HIT_RATE}.values())


def leaderboard_rows(board: Leaderboard, ranking: list[Measure]) -> list[dict[str, Any]]:
    """One row per evaluated pair, ranked inside its set as `to_markdown` ranks it."""
    return [
        {
            "set": entry.set_identifier,
            "rank": rank,
            "retriever": entry.retriever_identifier,
            **dict(zip([figure.key for figure in TESTED], figure_cells(entry.summary, TESTED))),
            "questions": entry.summary.question_count,
            "p95_latency_ms": _rounded(entry.summary.latency.get("p95")),
            "batch_mean_latency_ms": _rounded(entry.summary.latency.get("batch_mean")),
            **{measure.name: _at_depth(entry, measure) for measure in ranking},
            "run_id": entry.run_id,
            "latest_run_complete": entry.latest_run_complete,
        }
        for set_identifier in board.set_identifiers
        for rank, entry in enumerate(board.for_set(set_identifier), start=1)
    ]


def depth_rows(board: Leaderboard) -> list[dict[str, str]]:
    """One row per pair that recorded turns: top-1 / top-3 at each turn depth, the conversations all hit
    and the gap beside the set's `rewrite` run, as text; none for a board without turns."""
    return [
        {
            "set": set_identifier,
            "retriever": row.retriever_identifier,
            **{f"depth_{depth}": row.depth_text(depth) for depth in DEPTHS},
            "conversations_all_hit": row.all_hit_text,
            "rewrite_gap": row.gap_text,
        }
        for set_identifier in board.set_identifiers
        for row in turn_entries(board.summaries(set_identifier))
    ]


def _at_depth(entry: LeaderboardEntry, measure: Measure) -> str:
    """As the measure reads ("0.515"); empty where the run did not record it."""
    value = entry.summary.figure(measure.key(entry.summary.cutoffs[-1]))
    return "" if value is None else measure.text(value)


def _rounded(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)
