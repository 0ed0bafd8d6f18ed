"""A drop confined to later turns, named in the verdict.

Retrieval for a conversation fails first where the turn leans on what came before ("and at supersonic
speeds?"): a change to the query mode, the rewriter or the index can leave the opening turns as they were
and lose the later ones. Said as such, the verdict points the team at the history, not at the retrieval.
Both runs hold the same unchanged questions (regression.py restricts them before asking), so the depths'
counts are held to the tolerances by the check's own exact rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_pipeline.core.base.formatting import points, signed_pp
from retrieval_pipeline.core.golden.conversations import DEPTHS
from retrieval_pipeline.core.scoring.checks.metric_gates import hit_rate_gates
from retrieval_pipeline.core.scoring.checks.tolerances import count_drop, exceeds
from retrieval_pipeline.core.scoring.measures import HIT_RATE, Figure, Gate
from retrieval_pipeline.core.scoring.results import GroupRates


def later_turns_drop(current: dict[str, GroupRates], baseline: dict[str, GroupRates], held: Sequence[Gate]) -> str | None:
    """The sentence naming the later depths that dropped beyond a gated hit rate's tolerance while depth 1
    held within it; None when no gated rate dropped that way (or the runs have no opening turns)."""
    opening = DEPTHS[0]
    if opening not in current or opening not in baseline:
        return None
    parts = []
    for k, tolerance in hit_rate_gates(held).items():
        if _dropped(baseline[opening], current[opening], k, tolerance):
            continue
        later = [
            f"depth {depth} dropped {points(baseline[depth].hit_rate(k) - current[depth].hit_rate(k))}"
            for depth in DEPTHS[1:]
            if depth in current and depth in baseline and _dropped(baseline[depth], current[depth], k, tolerance)
        ]
        if later:
            held_change = signed_pp(current[opening].hit_rate(k) - baseline[opening].hit_rate(k))
            parts.append(
                f"{Figure(HIT_RATE, k).title} at turn " + ", ".join(later) + f" (tolerance {points(tolerance)}) "
                f"while depth {opening} held ({held_change})"
            )
    return "Drop confined to later turns: " + "; ".join(parts) + "." if parts else None


def _dropped(before: GroupRates, after: GroupRates, k: int, tolerance: float) -> bool:
    return exceeds(count_drop((before.hit_count(k), before.questions), (after.hit_count(k), after.questions)), tolerance)
