"""What a run's check found: its verdict, and the report `detect_regression` (regression.py) makes of it.

Apart from the detection because far more reads a report than makes one: the store records it, the
views lay it out, the baseline policy and the leaderboard read its verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from retrieval_pipeline.core.scoring.checks.change_breakdown import GroupDelta
from retrieval_pipeline.core.scoring.checks.unjudged_losses import UnjudgedLosses
from retrieval_pipeline.core.scoring.rescoring import RescoredBaseline
from retrieval_pipeline.core.scoring.set_versions import SetChanges
from retrieval_pipeline.core.scoring.slices import FORM, HARD_CLASS, TURN_DEPTH
from retrieval_pipeline.core.scoring.stats.intervals import DEFAULT_SIGNIFICANCE
from retrieval_pipeline.core.scoring.stats.slice_tests import SliceTest


class Verdict(str, Enum):
    """What a run's check found, stored with the run (`verdict` summary column)."""

    BASELINE = "baseline"
    """No baseline existed: the run is recorded as one."""
    PASS = "pass"
    REGRESSION = "regression"
    INCONCLUSIVE = "inconclusive"
    """A drop beyond tolerance that its corrected p-value cannot tell from noise (only with min_significance),
    or that unjudged documents explain (only with max_unjudged_share)."""
    INCOMPLETE = "incomplete"
    NOT_COMPARABLE = "not_comparable"
    """Fewer unchanged questions in common with the baseline than `min_compared_questions`."""


AUTO_ACCEPTED = frozenset({Verdict.BASELINE, Verdict.PASS, Verdict.NOT_COMPARABLE})
"""Verdicts that make a run a baseline under the `accepted` policy without an explicit `accept`. A
not-comparable run is one: it measured a set too different to judge, and refusing it would leave every
later run of the new set version compared with nothing. An inconclusive run is not: its drop may be real
but too small for the set to show, and keeping the baseline lets a slow decline add up until it shows."""
FAILING = frozenset({Verdict.REGRESSION, Verdict.INCOMPLETE})
"""Verdicts that fail a check: a regression, or a run that cannot be compared because questions failed."""
WARNED = frozenset({Verdict.NOT_COMPARABLE, Verdict.INCONCLUSIVE})
"""Verdicts that pass a check, flagged: not comparable, or a drop the set cannot tell from noise."""


@dataclass(frozen=True)
class RegressionReport:
    has_baseline: bool
    verdict: Verdict
    summary: str
    hit_rate_deltas: tuple[tuple[int, float], ...] = ()
    """(cut-off, current minus baseline hit rate) at each tested cut-off (measures.TESTED) the check compared."""
    baseline_run_id: str | None = None
    p95_latency_delta_ms: float | None = None
    by_slice: tuple[tuple[str, tuple[GroupDelta, ...]], ...] = ()
    """(slice name, its keys' deltas) for every declared slice (slices.SLICES), in their order."""
    flipped_to_miss: tuple[str, ...] = ()
    flipped_to_hit: tuple[str, ...] = ()
    hit_rate_p_values: tuple[tuple[int, float], ...] = ()
    """(cut-off, uncorrected paired p-value of the change) at each tested cut-off the check compared."""
    set_changes: SetChanges | None = None
    """Present whenever there is a baseline: what the comparison left out, and on how many questions it ran."""
    excluded_unstable: tuple[str, ...] = ()
    """Unchanged questions left out of the comparison as unstable (`audit.exclude_unstable`)."""
    slice_tests: tuple[SliceTest, ...] = ()
    significance: float = DEFAULT_SIGNIFICANCE
    """The level the report states results at: `min_significance`, else 0.05."""
    minimum_detectable_drop: float | None = None
    """The smallest hit-rate drop that can reach `significance` on the compared questions (None: none can)."""
    metric_deltas: tuple[tuple[str, float], ...] = ()
    """Ranking metrics, current minus baseline, for every metric both runs have."""
    unjudged_losses: UnjudgedLosses | None = None
    """The lost hits with unjudged documents in their place; None when nothing was compared."""
    weighted_deltas: tuple[tuple[str, float], ...] = ()
    """With a traffic log: every traffic-weighted figure's change on the compared questions, by key."""
    weighted_gate: bool = False
    """The hit-rate tolerances gated the traffic-weighted rates (`tolerances.weighted` and a log)."""
    rescored_baseline: RescoredBaseline | None = None
    """The baseline under the current labels and as stored, when the check rescored it (questions were
    relabelled since it ran): the changes above were computed from the rescored one. None when the
    baseline was compared as stored."""

    def hit_rate_delta(self, k: int) -> float:
        """The change at tested cut-off `k`; 0 when nothing was compared."""
        return dict(self.hit_rate_deltas).get(k, 0.0)

    def hit_rate_p_value(self, k: int) -> float:
        """The uncorrected p-value at tested cut-off `k`; 1 when nothing was compared."""
        return dict(self.hit_rate_p_values).get(k, 1.0)

    def deltas_by(self, name: str) -> tuple[GroupDelta, ...]:
        """The deltas of a declared slice's keys; none when nothing was compared."""
        return dict(self.by_slice).get(name, ())

    @property
    def by_form(self) -> tuple[GroupDelta, ...]:
        return self.deltas_by(FORM.name)

    @property
    def by_hard_class(self) -> tuple[GroupDelta, ...]:
        return self.deltas_by(HARD_CLASS.name)

    @property
    def by_turn_depth(self) -> tuple[GroupDelta, ...]:
        return self.deltas_by(TURN_DEPTH.name)

    @property
    def is_regression(self) -> bool:
        return self.verdict is Verdict.REGRESSION

    @property
    def is_inconclusive(self) -> bool:
        return self.verdict is Verdict.INCONCLUSIVE
