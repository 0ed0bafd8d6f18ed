"""What a golden set can detect: the smallest top-1 and top-3 drops it catches at 80% power, and the
size it would need to catch the configured tolerances (power.py states the formula).

The flip rate is measured on the history the audit reads: between consecutive complete runs of one
pair with the same index version, the share of questions (present in both, under the current labels:
rescoring.py) whose hit at the cut-off changed. A pair with no such history is taken as noiseless, and
the report says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from retrieval_pipeline.core.base.formatting import as_written, percent, points
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.scoring.checks.metric_gates import hit_rate_gates
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.measures import gates
from retrieval_pipeline.core.scoring.rescoring import under_current_labels
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.set_versions import restrict, set_changes
from retrieval_pipeline.core.scoring.stats.intervals import DEFAULT_SIGNIFICANCE
from retrieval_pipeline.core.scoring.stats.power import POWER, detectable_drop, questions_needed
from retrieval_pipeline.core.scoring.stats.slice_tests import TESTED_CUTOFFS


@dataclass(frozen=True)
class CutoffPower:
    k: int
    flip_rate: float
    detectable_drop: float | None
    """None: no drop at all is caught at the power on this many questions."""
    tolerance: float
    questions_needed: int | None
    """To catch a drop of `tolerance`; None when no size can (a zero tolerance)."""

    @property
    def sentence(self) -> str:
        if self.detectable_drop is None:
            drop = "no drop detectable on this many questions"
        else:
            drop = f"smallest detectable drop {points(self.detectable_drop)}"
        needed = f"{self.questions_needed} questions" if self.questions_needed is not None else "no set size"
        return f"top-{self.k}: {drop}; {needed} to detect the {points(self.tolerance)} tolerance"


@dataclass(frozen=True)
class SetPower:
    questions: int
    significance: float
    run_pairs: int
    """Consecutive run pairs the flip rates were measured on (0: none, taken as noiseless)."""
    cutoffs: tuple[CutoffPower, ...]
    power: float = POWER

    @property
    def sentence(self) -> str:
        measured = (
            f"flip rate {', '.join(f'top-{c.k} {percent(c.flip_rate)}' for c in self.cutoffs)} over {self.run_pairs} run pairs"
            if self.run_pairs
            else "no repeated runs to measure a flip rate, taken as 0"
        )
        return (
            f"Power {percent(self.power)} (McNemar, significance {as_written(self.significance)}, {measured}) on "
            f"{self.questions} questions: " + "; ".join(c.sentence for c in self.cutoffs) + "."
        )


def set_power(question_set: GoldenQuestionSet, histories: Mapping[str, Sequence[RunResult]], tolerances: Tolerances) -> SetPower:
    """`histories`: each retriever's complete runs, oldest first."""
    significance = tolerances.min_significance or DEFAULT_SIGNIFICANCE
    limits = hit_rate_gates(gates(tolerances, TESTED_CUTOFFS))
    flips, compared, pairs = dict.fromkeys(limits, 0), 0, 0
    for runs in histories.values():
        rescored = [under_current_labels(run, question_set).run for run in runs]
        for before, after in zip(rescored, rescored[1:]):
            ids = set_changes(after, before).compared_ids
            if before.index_version != after.index_version or not ids:
                continue
            now, then = restrict(after, ids), restrict(before, ids)
            for k in flips:
                flips[k] += int((now.questions.hits(k) != then.questions.hits(k)).sum())
            compared, pairs = compared + len(ids), pairs + 1
    size = len(question_set.questions)
    cutoffs = []
    for k, tolerance in limits.items():
        rate = flips[k] / compared if compared else 0.0
        cutoffs.append(
            CutoffPower(
                k, rate, detectable_drop(size, rate, significance), tolerance, questions_needed(tolerance, rate, significance)
            )
        )
    return SetPower(size, significance, pairs, tuple(cutoffs))
