"""Prediction-powered estimates: the formula against a computation written here, and honest intervals by
simulation (about 95% coverage over many seeds, where the machine-only figure misses the truth)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from retrieval_pipeline.core.scoring.stats.intervals import Z_95
from retrieval_pipeline.core.scoring.stats.prediction_powered import classical_mean, ppi_mean

TRUTH = 0.4
"""The share of questions a retriever really hits in the simulated population."""


def population(generator: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Human figures y (hit or not) and a judge that over-labels as relevant: it turns 30% of the misses
    into hits and 10% of the hits into misses, so its mean is biased upwards (0.54 against 0.4)."""
    y = (generator.random(size) < TRUTH).astype(float)
    flip = np.where(y == 1, generator.random(size) < 0.1, generator.random(size) < 0.3)
    return y, np.where(flip, 1 - y, y)


def test_the_estimate_is_the_machine_mean_corrected_by_its_labelled_error():
    predicted = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.5, 0.25]
    labelled = [0, 2, 4, 6]
    observed = [1.0, 0.0, 0.0, 1.0]
    exact = [1.0, 0.0]
    estimate = ppi_mean(predicted, [predicted[i] for i in labelled], observed, exact)

    f, y = np.array(predicted), np.array(observed)
    errors = y - f[labelled]
    rectified = f.mean() + errors.mean()
    value = (len(f) * rectified + sum(exact)) / (len(f) + len(exact))
    half = Z_95 * len(f) / (len(f) + len(exact)) * math.sqrt(f.var(ddof=1) / len(f) + errors.var(ddof=1) / len(labelled))
    assert estimate.value == pytest.approx(value)
    assert (estimate.low, estimate.high) == pytest.approx((max(0.0, value - half), min(1.0, value + half)))
    assert (estimate.labelled, estimate.total) == (6, 10)


def test_the_human_only_interval_is_the_normal_one():
    observed = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    estimate = classical_mean(observed)
    half = Z_95 * math.sqrt(np.var(observed, ddof=1) / len(observed))
    assert (estimate.value, estimate.low, estimate.high) == pytest.approx((0.6875, 0.6875 - half, 0.6875 + half))
    assert 0 < estimate.low and estimate.high < 1  # inside [0, 1]: nothing clipped


def test_intervals_stay_inside_zero_to_one():
    estimate = classical_mean([1.0, 1.0, 1.0, 0.0])
    assert estimate.high == 1.0 and estimate.low > 0


def test_no_labelled_question_is_refused():
    with pytest.raises(ValueError, match="no question with human labels"):
        ppi_mean([1.0, 0.0], [], [])


def coverage(estimator, seeds: int = 2000, size: int = 400, labelled: int = 60) -> float:
    covered = 0
    for seed in range(seeds):
        generator = np.random.default_rng(seed)
        y, f = population(generator, size)
        chosen = generator.choice(size, labelled, replace=False)
        low, high = estimator(y, f, chosen)
        covered += low <= TRUTH <= high
    return covered / seeds


def test_prediction_powered_intervals_cover_the_truth_about_95_percent_of_the_time():
    def ppi(y, f, chosen):
        estimate = ppi_mean(f.tolist(), f[chosen].tolist(), y[chosen].tolist())
        return estimate.low, estimate.high

    assert 0.93 <= coverage(ppi) <= 0.97


def test_the_machine_filled_figure_with_the_same_kind_of_interval_misses_the_truth():
    def machine_only(y, f, chosen):
        half = Z_95 * math.sqrt(f.var(ddof=1) / len(f))
        return f.mean() - half, f.mean() + half

    assert coverage(machine_only, seeds=300) < 0.5


def test_a_good_judge_makes_the_interval_narrower_than_the_human_only_one():
    generator = np.random.default_rng(3)
    y = (generator.random(2000) < TRUTH).astype(float)
    f = np.where(generator.random(2000) < 0.03, 1 - y, y)  # a judge right 97% of the time
    chosen = generator.choice(2000, 100, replace=False)
    powered = ppi_mean(f.tolist(), f[chosen].tolist(), y[chosen].tolist())
    human = classical_mean(y[chosen].tolist())
    assert powered.high - powered.low < 0.6 * (human.high - human.low)
