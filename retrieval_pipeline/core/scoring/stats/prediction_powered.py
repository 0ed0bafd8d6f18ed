"""Prediction-powered estimates: a mean measured with a few human labels and many machine ones, unbiased.

A figure scored with machine labels alone carries the judge's bias (LLM judges over-label as relevant),
however many questions it covers; one scored with human labels alone is unbiased but rests on the few
questions people judged. Prediction-powered inference (Angelopoulos et al., Science 2023; for IR,
Oosterhuis et al., 2024) uses both: the machine's mean over every question, corrected by the mean error
the machine makes on the questions people labelled,

    θ̂ = (1/N)·Σ_{all N} f_i + (1/n)·Σ_{labelled n} (y_j − f_j)

with f the figure under machine labels and y under human labels, and a 95% interval from the two
independent variances,

    θ̂ ± z·√( Var(f)/N + Var(y − f)/n ),

clipped to [0, 1], where every figure estimated here (a hit, an nDCG) lies.

It is unbiased whatever the judge's quality when the labelled questions are a uniform random sample of
the N; a good judge (y − f small) makes it far narrower than the human-only interval, a bad one about as
wide. Questions whose figure the labels cannot change (nothing pooled) are known exactly and enter as
they are. Pure functions over plain floats.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean, variance

from retrieval_pipeline.core.scoring.stats.intervals import Z_95


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float | None
    high: float | None
    """None when too few questions (fewer than two) give no variance."""
    labelled: int
    total: int

    def __post_init__(self) -> None:
        if not 0 <= self.labelled <= self.total:
            raise ValueError(f"labelled questions are some of the total: {self.labelled} of {self.total}")


def classical_mean(
    observed: Sequence[float], exact: Sequence[float] = (), population: int | None = None, z: float = Z_95
) -> Estimate:
    """The human figures alone: the mean of the labelled questions (a random sample of the `population`
    of questions labels can change, default: just them) with the normal interval, and the `exact` ones."""
    if not observed:
        raise ValueError("no labelled question to estimate from")
    spread = math.sqrt(variance(observed) / len(observed)) if len(observed) > 1 else None
    return _joined(fmean(observed), spread, population or len(observed), len(observed), exact, z)


def ppi_mean(
    predicted: Sequence[float],
    predicted_labelled: Sequence[float],
    observed_labelled: Sequence[float],
    exact: Sequence[float] = (),
    z: float = Z_95,
) -> Estimate:
    """The prediction-powered mean over `exact` (questions known exactly) and the N `predicted` (machine
    figures of every other question), of which `predicted_labelled` / `observed_labelled` are the machine
    and human figures of the n labelled ones, in the same order."""
    if len(predicted_labelled) != len(observed_labelled):
        raise ValueError("each labelled question has a machine figure and a human figure")
    total, labelled = len(predicted), len(observed_labelled)
    if labelled == 0:
        raise ValueError("no question with human labels: the machine's error cannot be measured")
    errors = [y - f for y, f in zip(observed_labelled, predicted_labelled)]
    rectified = fmean(predicted) + fmean(errors)
    spread = math.sqrt(variance(predicted) / total + variance(errors) / labelled) if min(total, labelled) > 1 else None
    return _joined(rectified, spread, total, labelled, exact, z)


def _joined(mean: float, spread: float | None, population: int, labelled: int, exact: Sequence[float], z: float) -> Estimate:
    """The estimate of the `population` questions joined with the questions known exactly, each part
    weighted by its share of all questions (the exact part adds no variance)."""
    everyone = population + len(exact)
    share = population / everyone
    value = share * mean + sum(exact) / everyone
    if spread is None:
        return Estimate(value, None, None, labelled + len(exact), everyone)
    half = z * share * spread
    return Estimate(value, max(0.0, value - half), min(1.0, value + half), labelled + len(exact), everyone)
