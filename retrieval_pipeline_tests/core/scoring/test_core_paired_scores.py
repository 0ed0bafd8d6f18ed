"""Paired tests for the ranking measures: a randomization test on per-question score differences (fixed
seed, reproducible) and a bootstrap interval on the delta, Holm-corrected with the McNemar tests."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from core_helpers import run_from_codes
from measure_helpers import declare, throwaway_measure

from retrieval_pipeline.core.scoring.stats.significance import (
    EXACT_UP_TO,
    bootstrap_interval,
    holm_adjusted,
    paired_randomization_p,
)
from retrieval_pipeline.core.scoring.stats.slice_tests import overall_test, paired_slice_tests


def enumerated_p(differences):
    """Every sign assignment written out: the share whose |sum| reaches the observed |sum|."""
    observed = abs(sum(differences))
    sums = [abs(sum(s * d for s, d in zip(signs, differences))) for signs in itertools.product((1, -1), repeat=len(differences))]
    return sum(total >= observed - 1e-12 for total in sums) / len(sums)


@pytest.mark.parametrize(
    "differences",
    [[0.5, 0.2, -0.1, 0.3], [1.0, 1.0, 1.0], [0.25, -0.25], [0.1, 0.2, 0.3, -0.4, 0.5, 1 / 3, -0.7, 0.05, 0.9, 0.6, -0.2, 0.15]],
)
def test_a_few_differences_get_the_exact_p_value_of_all_sign_flips(differences):
    [p_value] = paired_randomization_p(np.array(differences + [0.0, 0.0]))

    assert p_value == pytest.approx(enumerated_p(differences))


def test_many_differences_are_sampled_reproducibly_and_close_to_the_exact_value():
    rng = np.random.default_rng(7)
    differences = rng.normal(0.15, 0.5, EXACT_UP_TO + 4)  # 16: still enumerable here, sampled by the test
    [sampled] = paired_randomization_p(differences)

    assert paired_randomization_p(differences) == [sampled]  # the seed is fixed
    assert sampled == pytest.approx(enumerated_p(differences.tolist()), abs=0.01)


def test_figures_tested_together_get_the_p_values_each_would_get_alone():
    rng = np.random.default_rng(11)
    few = np.zeros((40, 2))
    few[:5, 0], few[3:9, 1] = rng.normal(0.2, 0.3, 5), rng.normal(-0.1, 0.3, 6)  # 9 questions differ: exact
    many = np.where(rng.random((400, 2)) < 0.1, rng.normal(0.05, 0.3, (400, 2)), 0.0)

    together, alone = paired_randomization_p(few), [paired_randomization_p(few[:, i])[0] for i in (0, 1)]

    assert together.tolist() == pytest.approx(alone)
    own_draws = [paired_randomization_p(many[:, i], seed=99)[0] for i in (0, 1)]  # each alone, other draws
    assert paired_randomization_p(many).tolist() == pytest.approx(own_draws, abs=0.02)


def test_no_difference_has_p_1_and_a_zero_width_interval():
    assert paired_randomization_p(np.zeros(5)).tolist() == [1.0] and bootstrap_interval(np.zeros(5)).tolist() == [[0.0, 0.0]]


def test_the_bootstrap_interval_holds_the_delta_and_narrows_with_more_questions():
    small = np.array([0.2, -0.1, 0.3, 0.0, 0.1, 0.0, 0.25, -0.05])
    large = np.tile(small, 50)

    [(low, high)] = bootstrap_interval(small)
    [(large_low, large_high)] = bootstrap_interval(large)

    assert low < small.mean() < high and large_low < large.mean() < large_high
    assert large_high - large_low < (high - low) / 4  # 50 times the questions: about a seventh of the width
    assert bootstrap_interval(small).tolist() == [[low, high]]


def test_every_declared_ranking_figure_is_tested_and_corrected_with_the_hit_rates(monkeypatch):
    declare(monkeypatch, throwaway_measure())
    baseline, current = run_from_codes("1" * 20), run_from_codes("3" * 6 + "1" * 14)

    tests = paired_slice_tests(baseline, current)

    ranking = [t for t in tests if t.measure != "hit_rate"]
    assert [(t.measure, t.k) for t in ranking] == [("mrr", 3), ("ndcg", 3), ("recall", 1), ("recall", 3), ("throwaway", 3)]
    mrr = ranking[0]
    assert (mrr.first_only, mrr.second_only, mrr.delta) == (6, 0, pytest.approx(6 * (1 / 3 - 1) / 20))
    assert mrr.p_value == pytest.approx(2 / 2**6)  # six equal drops: only all-down or all-up is as extreme
    assert mrr.interval[0] < mrr.delta < mrr.interval[1] <= 0
    assert [t.corrected_p_value for t in tests] == list(holm_adjusted([t.p_value for t in tests]))
    assert overall_test(tests, 3).measure == "hit_rate"
