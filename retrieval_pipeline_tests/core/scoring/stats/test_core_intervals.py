"""Uncertainty figures: Wilson intervals on every rate, Holm's correction, and the smallest detectable drop."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_pipeline.core.scoring.stats.intervals import minimum_detectable_drop, minimum_discordant_questions, wilson_interval
from retrieval_pipeline.core.scoring.stats.significance import holm_adjusted, mcnemar_exact_p


@pytest.mark.parametrize(("hits", "total"), [(0, 1), (1, 1), (7, 40), (77, 240), (240, 240), (0, 3), (5, 11)])
def test_wilson_interval_equals_scipys_wilson_score_interval(hits, total):
    stats = pytest.importorskip("scipy.stats")
    expected = stats.binomtest(hits, total).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson_interval(hits, total) == pytest.approx((expected.low, expected.high), abs=1e-12)


@given(st.integers(min_value=1, max_value=5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_the_interval_stays_inside_0_1_and_holds_the_rate(counts):
    hits, total = counts
    low, high = wilson_interval(hits, total)
    assert 0.0 <= low <= hits / total <= high <= 1.0
    assert high - low > 0  # even at 0 or all hits a finite set is never certain


def test_an_empty_set_says_nothing_is_known():
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_holm_matches_the_textbook_example():
    # Four p-values; sorted: 0.005*4, 0.01*3, 0.03*2, then max(0.06, 0.04*1): two survive at 0.05.
    assert holm_adjusted([0.01, 0.04, 0.03, 0.005]) == pytest.approx((0.03, 0.06, 0.06, 0.02))
    assert holm_adjusted([]) == ()


@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=30), st.sampled_from([0.01, 0.05, 0.1]))
def test_holm_rejects_exactly_what_the_step_down_procedure_rejects(p_values, level):
    adjusted = holm_adjusted(p_values)
    assert all(p <= a <= 1.0 for p, a in zip(p_values, adjusted))
    ordered = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = set()
    for position, index in enumerate(ordered):  # Holm (1979): stop at the first p above level / (m - position)
        if p_values[index] > level / (len(p_values) - position):
            break
        rejected.add(index)
    assert {i for i, a in enumerate(adjusted) if a <= level} == rejected


@pytest.mark.parametrize(("level", "tests"), [(0.05, 1), (0.05, 10), (0.01, 1), (0.1, 4), (0.05, 32)])
def test_the_minimum_flips_are_the_fewest_that_can_reach_the_level(level, tests):
    needed = minimum_discordant_questions(level, tests)
    assert min(1.0, tests * mcnemar_exact_p(needed, 0)) <= level  # Holm's first step multiplies by the test count
    assert min(1.0, tests * mcnemar_exact_p(needed - 1, 0)) > level


def test_a_40_question_set_cannot_detect_a_10_point_drop():
    # The example: 10 pp of 40 is 4 questions; 6 one-way flips are needed for p <= 0.05.
    assert minimum_detectable_drop(40, 0.05) == pytest.approx(6 / 40)
    assert minimum_detectable_drop(240, 0.05, tests=10) == pytest.approx(9 / 240)
    assert minimum_detectable_drop(5, 0.05) is None  # no drop at all can be told from noise


def test_a_significance_outside_0_1_is_refused():
    with pytest.raises(ValueError, match="significance"):
        minimum_detectable_drop(40, 1.5)
