"""The figures only a run of conversations has, as every output reads them: the conversations all hit,
and the gap beside the set's `rewrite` run (turns.py). The rates by turn depth are a breakdown like any
other (breakdowns.py); what is here is the text and the document keys said once for the terminal, the
Markdown, the HTML page, the JSON, the leaderboard and the Dagster metadata.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from retrieval_pipeline.core.base.formatting import rate_with_counts, signed_pp
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.turns import ConversationsHit, RewriteGap, rewrite_gap


def conversations_text(hit: ConversationsHit) -> str:
    """ "33.3% (1/3) of conversations hit in the top 3 at every turn"."""
    return f"{rate_with_counts(hit.all_hit, hit.conversations, hit.rate)} of conversations hit in the top {hit.k} at every turn"


def conversations_document(hit: ConversationsHit | None) -> dict[str, Any]:
    """The JSON keys of a run of conversations; none for a run without turns, whose document keeps its keys."""
    if hit is None:
        return {}
    return {hit.key: {"conversations": hit.conversations, "all_hit": hit.all_hit, "rate": hit.rate}}


@dataclass(frozen=True)
class GapView:
    """One run beside its `rewrite` run: what asking the turns as typed loses, overall and by depth."""

    retriever: str
    gap: RewriteGap

    @property
    def overall_text(self) -> str:
        """ "top-1 -40.0 pp, top-3 -20.0 pp"."""
        return ", ".join(f"{figure.title} {signed_pp(self.gap.delta(figure.k))}" for figure in TESTED)

    @property
    def depth_texts(self) -> tuple[tuple[str, str], ...]:
        """(depth, "-33.3 pp / -33.3 pp") in depth order: top-1 / top-3."""
        return tuple((d.key, " / ".join(signed_pp(d.delta(figure.k)) for figure in TESTED)) for d in self.gap.by_depth)

    @property
    def sentence(self) -> str:
        gap = self.gap
        depths = "; ".join(f"depth {depth} {text}" for depth, text in self.depth_texts)
        return (
            f"`{self.retriever}` on the turns as asked against `{gap.rewrite_retriever}` on their rewrites "
            f"({gap.turns} turns): {self.overall_text}; by depth (top-1 / top-3): {depths}."
        )

    def to_dict(self) -> dict[str, Any]:
        return {"retriever": self.retriever, **self.gap.as_dict()}


def gap_views(runs: Sequence[RunResult], rewrite_run: RunResult | None) -> tuple[GapView, ...]:
    """Every other run of the same set beside the `rewrite` run; none without one, or without shared turns."""
    if rewrite_run is None:
        return ()
    gaps = ((run.retriever_identifier, rewrite_gap(run, rewrite_run)) for run in runs if run is not rewrite_run)
    return tuple(GapView(retriever, gap) for retriever, gap in gaps if gap is not None)


def gap_lines(gaps: Sequence[GapView]) -> list[str]:
    """Markdown under a table, one sentence per run, headed by what the gap is; none without a rewrite run."""
    if not gaps:
        return []
    heading = "Rewrite gap (rate on the turns as asked minus rate on the set's rewrites; negative: rewriting would win):"
    return [heading, "", *(f"- {gap.sentence}" for gap in gaps)]
