"""Traffic-weighted figures: each golden question counted as often as real traffic asks it.

A set's plain rates count every question once, yet users may ask one question a thousand times and
another never. Weighting each question by the traffic a query log assigns it turns a rate into "the share
of traffic that gets a hit". The figures are the declared measures (measures.py), each a weighted mean of
the same per-question columns the plain means are taken over; a question no traffic was assigned to
weighs 0 and is named, so a reader sees which parts of the set the weighted figure ignores.

The questions, not the logged queries, are the sample: a question asked a million times is still one
observation of the retriever. So a weighted hit rate's 95% interval is Wilson's over Kish's effective
sample size n_eff = (sum w)^2 / sum w^2 (exactly the plain interval when all weights are equal), never
over the traffic count, which would claim a precision no set of 40 questions has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import repeat
from types import MappingProxyType
from typing import TYPE_CHECKING

from retrieval_pipeline.core.scoring.measures import HIT_RATE, figures
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.stats.intervals import effective_wilson_interval

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class TrafficWeights:
    """The traffic a query log assigned to each golden question: what a weighted figure is weighted by.

    `log` names the log, `fingerprint` the version of it that was read (None when unknown); a question
    absent from `counts` was assigned no traffic (weight 0)."""

    log: str
    counts: Mapping[str, int]
    fingerprint: str | None = None

    def __post_init__(self) -> None:
        if not self.log:
            raise ValueError("a traffic log needs a name")
        for question_id, count in self.counts.items():
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise ValueError(f"traffic of question '{question_id}' must be a whole number >= 0, got {count!r}")
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))

    def of(self, question_ids: Sequence[str]) -> np.ndarray:
        """Each question's weight, in the given order (0 where no traffic was assigned)."""
        import numpy as np

        return np.fromiter(map(self.counts.get, question_ids, repeat(0)), dtype=np.int64, count=len(question_ids))


@dataclass(frozen=True)
class WeightedFigures:
    """A run's declared figures weighted by traffic, keyed like the plain ones (`top1`, `mrr@10`, ...)."""

    traffic: TrafficWeights
    values: Mapping[str, float]
    intervals: Mapping[str, tuple[float, float]]
    """The 95% Wilson interval over the effective sample size of every weighted hit rate."""
    total: int
    """The traffic assigned to the run's questions, summed."""
    effective_questions: float
    """Kish's n_eff: how many equally weighted questions the weighted figures are worth."""
    zero_traffic: tuple[str, ...]
    """The run's questions no traffic was assigned to: they weigh 0 in every weighted figure."""


def weighted_figures(run: RunResult, traffic: TrafficWeights) -> WeightedFigures:
    """Every declared figure of `run` as a weighted mean over its questions, an errored question counting
    as a miss (score 0), as it does in the plain figures. No traffic on any question: every figure 0 and
    every interval all of 0..1, as for an empty set."""
    import numpy as np

    weights = traffic.of(run.questions.ids)
    total = int(weights.sum())
    columns = _question_columns(run)
    sums = np.vstack(list(columns.values())) @ weights.astype(np.float64)  # one product for every figure
    values = {key: (float(weighted) / total if total else 0.0) for key, weighted in zip(columns, sums.tolist())}
    size = total * total / float(np.dot(weights, weights)) if total else 0.0
    rates = [figure.key for figure in figures(run.cutoffs) if figure.measure is HIT_RATE]
    return WeightedFigures(
        traffic=traffic,
        values=values,
        intervals={key: effective_wilson_interval(values[key], size) for key in rates},
        total=total,
        effective_questions=size,
        zero_traffic=tuple(question_id for question_id, weight in zip(run.questions.ids, weights.tolist()) if weight == 0),
    )


def weighted_hit_rate(run: RunResult, traffic: TrafficWeights, k: int) -> Fraction:
    """The weighted hit rate at `k` as an exact ratio of whole numbers (the traffic is counted), so a
    weighted drop is held to its tolerance as exactly as a plain one (tolerances.exceeds)."""
    weights = traffic.of(run.questions.ids)
    total = int(weights.sum())
    return Fraction(int(weights[run.questions.hits(k)].sum()), total) if total else Fraction(0)


def _question_columns(run: RunResult) -> dict[str, np.ndarray]:
    """Each question's 0/1 hit at every cut-off and score on every ranking figure; errored ones 0."""
    import numpy as np

    answered = run.questions.answered
    hits = {HIT_RATE.key(k): run.questions.hits(k).astype(float) for k in run.cutoffs}
    scores = {key: np.where(answered, values, 0.0) for key, values in run.questions.metrics(run.cutoffs).items()}
    return hits | scores
