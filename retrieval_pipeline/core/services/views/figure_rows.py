"""One row per figure (a declared measure at a cut-off) and per latency statistic: the run's number, the
baseline's, the change, each as a number and as the text every output shows."""

from __future__ import annotations

from dataclasses import dataclass

from retrieval_pipeline.core.base.formatting import (
    interval_text,
    milliseconds,
    rate_with_counts,
    signed_milliseconds,
    tenths,
)
from retrieval_pipeline.core.retrieval.latency import BATCH_MEAN
from retrieval_pipeline.core.scoring.measures import Figure

MISSING = "—"
"""What a cell shows where a run has no such figure, or nothing was compared."""


def is_hit_rate(figure: Figure) -> bool:
    """The hit rate is counted from first-hit ranks (no per-question score): it has counts and intervals."""
    return figure.measure.score is None


@dataclass(frozen=True)
class FigureRow:
    """One figure of a run (or of one form or hard class in it).

    `count` and `interval` only for a hit rate. `change` is the change the reports show: None unless the
    run was judged against its baseline, and, for a figure the check did not measure itself, unless the
    set is unchanged. `checked` and `p_value` are the check's own, on the compared questions.
    `baseline` is the figure the change was computed from: the baseline rescored under the current labels
    when the check rescored it, and then `stored_baseline` is the baseline's figure as stored.
    """

    figure: Figure
    value: float
    questions: int = 0
    count: int | None = None
    interval: tuple[float, float] | None = None
    baseline: float | None = None
    change: float | None = None
    checked: float | None = None
    p_value: float | None = None
    stored_baseline: float | None = None
    rescored: bool = False
    """`baseline` is the baseline rescored under the current labels (rescoring.py), not as stored."""

    @property
    def key(self) -> str:
        return self.figure.key

    @property
    def title(self) -> str:
        return self.figure.title

    @property
    def name(self) -> str:
        """A row heading: "top-1 hit rate" (a hit rate's title names only its cut-off), "MRR@10"."""
        return f"{self.title} hit rate" if is_hit_rate(self.figure) else self.title

    @property
    def text(self) -> str:
        return self.figure.text(self.value)

    @property
    def count_text(self) -> str:
        """ "32.1% (77/240)": a rate with the counts it is made of."""
        return self.text if self.count is None else rate_with_counts(self.count, self.questions, self.value)

    @property
    def now_text(self) -> str:
        """ "32.1% (77/240), 95% CI 26.5–38.2%": the rate with how far it can be trusted; "0.515" for a score."""
        return self.count_text + (f", {interval_text(self.interval)}" if self.interval is not None else "")

    @property
    def baseline_text(self) -> str:
        """ "32.1%"; a rescored baseline says so, with its figure as stored where that differs:
        "45.0% rescored (35.0% as stored)"."""
        if self.baseline is None:
            return MISSING
        text = self.figure.text(self.baseline)
        if not self.rescored:
            return text
        stored = self.stored_baseline
        if stored is None or self.figure.text(stored) == text:
            return f"{text} rescored"
        return f"{text} rescored ({self.figure.text(stored)} as stored)"

    @property
    def change_text(self) -> str:
        return MISSING if self.change is None else self.figure.change_text(self.change)

    @property
    def checked_text(self) -> str:
        return MISSING if self.checked is None else self.figure.change_text(self.checked)


@dataclass(frozen=True)
class FigureDelta:
    """A change of one figure where only the change is known (a group's, in the check's comparison)."""

    figure: Figure
    delta: float

    @property
    def text(self) -> str:
        return self.figure.change_text(self.delta)


@dataclass(frozen=True)
class LatencyRow:
    """One latency statistic in milliseconds: a percentile, the maximum, or a batched run's mean."""

    statistic: str
    value: float
    baseline: float | None = None
    change: float | None = None

    @property
    def batched(self) -> bool:
        return self.statistic == BATCH_MEAN

    @property
    def name(self) -> str:
        return "mean latency (batches)" if self.batched else f"{self.statistic} latency"

    @property
    def text(self) -> str:
        return milliseconds(self.value)

    @property
    def now_text(self) -> str:
        return self.text

    @property
    def cell_text(self) -> str:
        """ "p95 12.5", "mean 3.1": a cell under a column already headed in milliseconds."""
        return f"{'mean' if self.batched else self.statistic} {tenths(self.value)}"

    @property
    def baseline_text(self) -> str:
        return MISSING if self.baseline is None else milliseconds(self.baseline)

    @property
    def change_text(self) -> str:
        return signed_milliseconds(self.change)
