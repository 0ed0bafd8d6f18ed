"""Calibration figures against scikit-learn, scipy and the delta method computed here."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from retrieval_pipeline.core.scoring.stats.agreement import Confusion, kappa_agreement, kendall_tau, rows_for_width
from retrieval_pipeline.core.scoring.stats.intervals import Z_95

FIXED = [(True, True)] * 31 + [(True, False)] * 6 + [(False, True)] * 14 + [(False, False)] * 49


def _delta_method_variance(table: np.ndarray) -> float:
    """n·Var(kappa) by the delta method over the multinomial cell shares, by numeric derivatives: the
    large-sample variance Fleiss, Cohen & Everitt give in closed form."""

    def kappa(p: np.ndarray) -> float:
        p = p.reshape(2, 2)
        chance = float(p.sum(1) @ p.sum(0))
        return (float(np.trace(p)) - chance) / (1 - chance)

    p = (table / table.sum()).ravel()
    step = 1e-7
    gradient = np.array([(kappa(p + step * e) - kappa(p - step * e)) / (2 * step) for e in np.eye(4)])
    return float(gradient @ (np.diag(p) - np.outer(p, p)) @ gradient)


def test_kappa_matches_scikit_learn_and_its_interval_the_delta_method():
    agreement = kappa_agreement(FIXED)
    humans = [h for h, _ in FIXED]
    machines = [m for _, m in FIXED]
    assert agreement.kappa == pytest.approx(cohen_kappa_score(humans, machines), abs=1e-12)
    table = confusion_matrix(humans, machines, labels=[True, False])
    assert agreement.confusion == Confusion(*table.ravel().tolist())
    assert agreement.variance == pytest.approx(_delta_method_variance(table), rel=1e-5)
    half = Z_95 * math.sqrt(_delta_method_variance(table) / 100)
    assert (agreement.low, agreement.high) == pytest.approx((agreement.kappa - half, agreement.kappa + half), rel=1e-5)


def test_base_rates_precision_and_recall_count_the_rows():
    agreement = kappa_agreement(FIXED)
    assert (agreement.n, agreement.human_yes_rate, agreement.machine_yes_rate) == (100, 0.37, 0.45)
    assert agreement.precision == pytest.approx(31 / 45)
    assert agreement.recall == pytest.approx(31 / 37)


def test_kappa_is_undefined_when_both_judges_answer_one_way_throughout():
    agreement = kappa_agreement([(False, False)] * 8)
    assert (agreement.kappa, agreement.low, agreement.high, agreement.precision, agreement.recall) == (None,) * 5
    assert rows_for_width(agreement, 0.2) is None


def test_no_rows_with_both_answers_is_refused():
    with pytest.raises(ValueError, match="nothing to calibrate"):
        kappa_agreement([])


def test_rows_for_width_reaches_the_width_with_the_same_shares_and_not_one_row_sooner():
    agreement = kappa_agreement(FIXED)
    more = rows_for_width(agreement, 0.2)
    assert more > 0

    def width(rows: int) -> float:
        return 2 * Z_95 * math.sqrt(_delta_method_variance(np.array([[31, 6], [14, 49]])) / rows)

    assert width(100 + more) < 0.2 <= width(100 + more - 1)
    fourfold = kappa_agreement(FIXED * 4)
    assert fourfold.high - fourfold.low == pytest.approx((agreement.high - agreement.low) / 2, rel=1e-9)
    assert rows_for_width(fourfold, 0.2) == max(0, 100 + more - 400)


def test_perfect_agreement_needs_no_more_rows():
    agreement = kappa_agreement([(True, True)] * 5 + [(False, False)] * 5)
    assert (agreement.kappa, agreement.low, agreement.high) == (1.0, 1.0, 1.0)
    assert rows_for_width(agreement, 0.1) == 0


@pytest.mark.parametrize("seed", range(20))
def test_kendall_tau_matches_scipy_with_ties(seed):
    generator = random.Random(seed)
    retrievers = [f"r{i}" for i in range(generator.randint(2, 9))]
    a = {name: generator.choice([0.1, 0.2, 0.3, 0.4, 0.5]) for name in retrievers}
    b = {name: generator.choice([0.1, 0.2, 0.3, 0.4]) for name in retrievers}
    expected = kendalltau([a[n] for n in retrievers], [b[n] for n in retrievers]).statistic
    got = kendall_tau(a, b)
    if math.isnan(expected):
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_kendall_tau_refuses_rankings_of_different_retrievers():
    with pytest.raises(ValueError, match="r3"):
        kendall_tau({"r1": 0.2, "r2": 0.3}, {"r1": 0.2, "r3": 0.1})
