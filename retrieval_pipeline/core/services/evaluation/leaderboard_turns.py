"""The leaderboard of a set of conversations by turn depth, read from the stored summaries.

Published work finds retrieval degrades on later turns, and a single rate over all turns hides by how
much: each retriever's top-1 and top-3 at each depth sit side by side, with the conversations whose every
turn hit, and beside the set's `rewrite` run (the set's own rewrites asked instead of the turns: an
oracle), what each retriever loses on the turns as typed. Only sets whose runs recorded turns have it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval_pipeline.core.base.formatting import percent, signed_pp
from retrieval_pipeline.core.golden.conversations import DEPTHS
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.turns import ALL_HIT_K, REWRITE_MODE, RewriteGap, TurnFigures, figures_gap
from retrieval_pipeline.core.storage.run_summary import RunSummary


@dataclass(frozen=True)
class TurnEntry:
    summary: RunSummary
    """A leaderboard entry's run."""
    turns: TurnFigures
    gap: RewriteGap | None
    """Against the set's `rewrite` run; None for that run itself, or a set without one."""

    @property
    def retriever_identifier(self) -> str:
        return self.summary.key.retriever_identifier

    def depth_text(self, depth: str) -> str:
        """ "66.7% / 100.0%" (top-1 / top-3); blank for a depth the run had no turn at."""
        rates = self.turns.by_depth.get(depth)
        return "" if rates is None else " / ".join(percent(rates.hit_rate(figure.k)) for figure in TESTED)

    @property
    def all_hit_text(self) -> str:
        hit = self.turns.all_hit
        return "" if hit is None else percent(hit.rate)

    @property
    def gap_text(self) -> str:
        return "" if self.gap is None else " / ".join(signed_pp(self.gap.delta(figure.k)) for figure in TESTED)


TABLE_COLUMNS = (
    *(f"{figure.column}_depth_{depth}" for depth in DEPTHS for figure in TESTED),
    f"conversations_all_hit@{ALL_HIT_K}",
    *(f"{figure.key}_rewrite_gap" for figure in TESTED),
)
"""The leaderboard table's columns for a set of conversations (null for a run without turns)."""


def table_values(row: TurnEntry | None) -> dict[str, float | None]:
    """`row`'s figures under TABLE_COLUMNS, null where it has none."""
    if row is None:
        return dict.fromkeys(TABLE_COLUMNS)
    by_depth, hit, gap = row.turns.by_depth, row.turns.all_hit, row.gap
    rates = [by_depth[d].hit_rate(f.k) if d in by_depth else None for d in DEPTHS for f in TESTED]
    gaps = [gap.delta(figure.k) if gap is not None else None for figure in TESTED]
    return dict(zip(TABLE_COLUMNS, [*rates, hit.rate if hit is not None else None, *gaps]))


def turn_entries(summaries: Sequence[RunSummary]) -> list[TurnEntry]:
    """The runs of one set (a leaderboard's, in its order) that recorded turns, each beside the set's
    `rewrite` run of the same retriever setup (kind and parameters), so the gap is what the rewriting
    loses and nothing else: a run with no such `rewrite` run has none."""
    recorded = [summary for summary in summaries if summary.turns is not None]
    rewrites = {s.retriever_setup: s for s in reversed(recorded) if s.query_mode == REWRITE_MODE and s.retriever_setup}
    entries = []
    for summary in recorded:
        rewrite = rewrites.get(summary.retriever_setup) if summary.retriever_setup else None
        entries.append(
            TurnEntry(summary, summary.turns, None if rewrite is None or rewrite is summary else _gap(summary, rewrite))
        )
    return entries


def _gap(summary: RunSummary, rewrite: RunSummary) -> RewriteGap:
    return figures_gap(summary.turns, rewrite.turns, rewrite.key.retriever_identifier, rewrite.run_id)


def depth_markdown(set_identifier: str, summaries: Sequence[RunSummary]) -> str | None:
    """The set's table by depth, None for a set without turns."""
    rows = turn_entries(summaries)
    if not rows:
        return None
    rates = " / ".join(figure.short for figure in TESTED)
    rewrite = any(row.gap is not None for row in rows)
    header = ["retriever", *[f"depth {depth} {rates}" for depth in DEPTHS], "conversations all hit@3"]
    header += [f"rewrite gap {rates}"] if rewrite else []
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        cells = [f"`{row.retriever_identifier}`", *[row.depth_text(depth) for depth in DEPTHS], row.all_hit_text]
        cells += [row.gap_text] if rewrite else []
        lines.append("| " + " | ".join(cells) + " |")
    note = (
        "\n\nRewrite gap: rate on the turns as asked minus rate on the set's rewrites, asked by the `rewrite` "
        "retriever of the same kind and parameters (negative: rewriting would win)."
    )
    return f"### `{set_identifier}` by turn depth\n\n" + "\n".join(lines) + (note if rewrite else "")
