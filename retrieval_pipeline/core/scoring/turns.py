"""The figures only a run of conversations has: whole conversations answered, and what rewriting loses.

A turn is scored as any question (its rates, its depth's breakdown: slices.py). Two figures read the
conversation as a whole. A user who meets one miss in a conversation has met a failing assistant, so
`conversations_all_hit` counts the conversations whose every turn hits in the top 3. And a `rewrite` run
(the set's standalone rewrites asked instead of the turns) is an oracle for the turn's meaning:
`rewrite_gap` is how much worse the same retrieval does on the turns as asked, overall and by depth,
which is what a rewriter or a history mode has to win back.
"""

from __future__ import annotations

from dataclasses import dataclass

from retrieval_pipeline.core.retrieval.query_modes import QueryMode
from retrieval_pipeline.core.scoring.checks.change_breakdown import GroupDelta, group_deltas
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.results import GroupRates, RunResult
from retrieval_pipeline.core.scoring.scoring import hit_rate
from retrieval_pipeline.core.scoring.set_versions import restrict

REWRITE_MODE = QueryMode("rewrite").label
"""The query mode (query_modes.py) of the run the others are set beside: the set's own rewrites asked."""
ALL_HIT_K = TESTED[-1].k
"""The cut-off a conversation's every turn must hit at: the deepest tested one, top-3."""


@dataclass(frozen=True)
class ConversationsHit:
    conversations: int
    all_hit: int
    """Conversations every turn of which hits at `k` (an errored turn is not a hit)."""
    k: int = ALL_HIT_K

    @property
    def rate(self) -> float:
        return hit_rate(self.all_hit, self.conversations)

    @property
    def key(self) -> str:
        return f"conversations_all_hit@{self.k}"


def conversations_all_hit(run: RunResult, k: int = ALL_HIT_K) -> ConversationsHit | None:
    """None for a run without turns: the figure would be a rate over no conversation."""
    every: dict[str, bool] = {}
    for conversation, hit in zip(run.questions.values("conversation"), run.questions.hits(k).tolist()):
        if conversation is not None:
            every[conversation] = every.get(conversation, True) and hit
    if not every:
        return None
    return ConversationsHit(len(every), sum(every.values()), k)


@dataclass(frozen=True)
class TurnFigures:
    """What a run measured on its turns, as a stored summary also holds it: each depth's rates and the
    conversations all hit. The single questions a set may also hold are left out."""

    by_depth: dict[str, GroupRates]
    all_hit: ConversationsHit | None

    @property
    def turns(self) -> GroupRates:
        """Every depth pooled: the rates over the turns alone."""
        return GroupRates(
            sum(rates.questions for rates in self.by_depth.values()),
            tuple((figure.k, sum(rates.hit_count(figure.k) for rates in self.by_depth.values())) for figure in TESTED),
        )


def turn_figures(run: RunResult) -> TurnFigures | None:
    """None for a run without turns."""
    by_depth = run.by_turn_depth()
    return TurnFigures(by_depth, conversations_all_hit(run)) if by_depth else None


@dataclass(frozen=True)
class RewriteGap:
    """The run on the turns as asked minus its `rewrite` run, on the turns both hold: negative where the
    turns as asked do worse (what rewriting the turns would win)."""

    rewrite_retriever: str
    rewrite_run_id: str
    turns: int
    deltas: tuple[tuple[int, float], ...]
    """(cut-off, rate as asked minus rate on rewrites) at each tested cut-off."""
    by_depth: tuple[GroupDelta, ...]
    all_hit_delta: float | None
    """conversations_all_hit@3 as asked minus on rewrites."""

    def delta(self, k: int) -> float:
        return dict(self.deltas)[k]

    def as_dict(self) -> dict:
        return {
            "rewrite_retriever": self.rewrite_retriever,
            "rewrite_run_id": self.rewrite_run_id,
            "turns": self.turns,
            **{f"{figure.key}_gap": self.delta(figure.k) for figure in TESTED},
            "by_turn_depth": [
                {"key": d.key, "turns": d.questions, **{f"{figure.key}_gap": d.delta(figure.k) for figure in TESTED}}
                for d in self.by_depth
            ],
            f"conversations_all_hit@{ALL_HIT_K}_gap": self.all_hit_delta,
        }


def rewrite_gap(run: RunResult, rewrite_run: RunResult) -> RewriteGap | None:
    """`rewrite_run`: the same retrieval asked the set's rewrites (query mode `rewrite`), compared on the
    turns both runs hold. None when they share no turn."""
    theirs = rewrite_run.questions.positions
    common = [
        question_id
        for question_id, turn in zip(run.questions.ids, run.questions.values("turn"))
        if turn is not None and question_id in theirs
    ]
    if not common:
        return None
    asked, rewritten = (turn_figures(restrict(side, common)) for side in (run, rewrite_run))
    return figures_gap(asked, rewritten, rewrite_run.retriever_identifier, rewrite_run.run_id)


def figures_gap(asked: TurnFigures, rewritten: TurnFigures, rewrite_retriever: str, rewrite_run_id: str) -> RewriteGap:
    """The gap between two runs' turn figures (two whole runs, or two stored summaries of the same set)."""
    both = (asked.all_hit, rewritten.all_hit)
    return RewriteGap(
        rewrite_retriever=rewrite_retriever,
        rewrite_run_id=rewrite_run_id,
        turns=asked.turns.questions,
        deltas=tuple((figure.k, asked.turns.hit_rate(figure.k) - rewritten.turns.hit_rate(figure.k)) for figure in TESTED),
        by_depth=group_deltas({d: r for d, r in asked.by_depth.items() if d in rewritten.by_depth}, rewritten.by_depth),
        all_hit_delta=both[0].rate - both[1].rate if None not in both else None,
    )
