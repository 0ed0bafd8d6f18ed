"""Regression detection (SPEC section 5): the verdict a CI gate and the Dagster check both rely on."""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import outcome, run_from_codes

from retrieval_pipeline.core.scoring.checks.regression import detect_regression
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.stats.significance import discordant_pairs, mcnemar_exact_p

DEFAULT = Tolerances()


def test_no_baseline_is_not_a_regression_and_is_recorded_as_the_baseline():
    report = detect_regression(run_from_codes("--"), None, DEFAULT)
    assert report.has_baseline is False
    assert report.is_regression is False
    assert (report.hit_rate_delta(1), report.hit_rate_delta(3)) == (0.0, 0.0)
    assert "recorded as the baseline" in report.summary
    assert report.baseline_run_id is None


def test_a_large_top1_drop_is_a_regression():
    baseline = run_from_codes("1111111111")
    current = run_from_codes("1111113333")  # top-1 10/10 -> 6/10, top-3 unchanged
    report = detect_regression(current, baseline, DEFAULT)
    assert report.is_regression is True
    assert report.hit_rate_delta(1) == pytest.approx(-0.4)
    assert report.hit_rate_delta(3) == 0.0
    assert report.baseline_run_id == baseline.run_id


def test_an_improvement_is_not_a_regression():
    report = detect_regression(run_from_codes("1111"), run_from_codes("3--1"), DEFAULT)
    assert report.is_regression is False
    assert report.hit_rate_delta(1) == pytest.approx(0.75)
    assert report.hit_rate_delta(3) == pytest.approx(0.5)


def test_a_five_point_drop_is_stable_under_default_tolerances():
    baseline = run_from_codes("1" * 20)
    current = run_from_codes("1" * 19 + "-")  # top-1 and top-3 both -0.05
    report = detect_regression(current, baseline, DEFAULT)
    assert report.hit_rate_delta(1) == pytest.approx(-0.05)
    assert report.hit_rate_delta(3) == pytest.approx(-0.05)
    assert report.is_regression is False


def test_a_top3_drop_alone_is_a_regression():
    baseline = run_from_codes("3333333333")
    current = run_from_codes("33333-----")  # top-1 stays 0, top-3 10/10 -> 5/10
    report = detect_regression(current, baseline, DEFAULT)
    assert report.hit_rate_delta(1) == 0.0
    assert report.is_regression is True
    assert "top-3" in report.summary and "top-1" not in report.summary


def test_a_drop_exactly_equal_to_the_tolerance_is_not_a_regression():
    # 0.8 - 0.7 is 0.10000000000000009 in floating point: the comparison must be exact.
    baseline = run_from_codes("11111111--")
    current = run_from_codes("1111111---")
    assert baseline.hit_rate(1) - current.hit_rate(1) > 0.1  # the float trap is real
    report = detect_regression(current, baseline, Tolerances(max_top1_drop=0.1, max_top3_drop=0.1))
    assert report.is_regression is False
    assert report.summary.startswith("No regression")


def test_a_drop_just_past_the_tolerance_is_a_regression():
    baseline = run_from_codes("11111111--")
    current = run_from_codes("111111----")  # 0.2 drop against 0.1
    assert detect_regression(current, baseline, DEFAULT).is_regression is True


@pytest.mark.parametrize(
    ("baseline_codes", "current_codes", "tolerance"),
    [("1" * 4, "11--", 0.5), ("1" * 8, "111111--", 0.25), ("1" * 10, "1111111---", 0.3), ("1" * 20, "1" * 17 + "---", 0.15)],
)
def test_a_drop_equal_to_other_tolerances_is_not_a_regression(baseline_codes, current_codes, tolerance):
    report = detect_regression(
        run_from_codes(current_codes),
        run_from_codes(baseline_codes),
        Tolerances(max_top1_drop=tolerance, max_top3_drop=tolerance),
    )
    assert report.is_regression is False


def test_custom_tolerances_widen_what_is_accepted():
    baseline = run_from_codes("1111111111")
    current = run_from_codes("1111113333")  # top-1 drops 40 points
    assert detect_regression(current, baseline, DEFAULT).is_regression is True
    assert detect_regression(current, baseline, Tolerances(max_top1_drop=0.4)).is_regression is False
    assert detect_regression(current, baseline, Tolerances(max_top1_drop=0.5)).is_regression is False


def test_zero_tolerance_flags_any_drop():
    baseline = run_from_codes("1" * 20)
    current = run_from_codes("1" * 19 + "3")
    assert detect_regression(current, baseline, Tolerances(max_top1_drop=0.0, max_top3_drop=0.0)).is_regression is True
    assert detect_regression(baseline, baseline, Tolerances(max_top1_drop=0.0, max_top3_drop=0.0)).is_regression is False


@pytest.mark.parametrize("field", ["max_top1_drop", "max_top3_drop", "max_p95_latency_increase_ms"])
@pytest.mark.parametrize("value", [-0.01, -1, float("nan")])
def test_a_negative_tolerance_is_refused(field, value):
    with pytest.raises(ValueError, match=field):
        Tolerances(**{field: value})


def test_per_class_deltas_show_a_drop_that_cancels_out_overall():
    classes = ["near-duplicate", "near-duplicate", "prose-free", "prose-free", None]
    baseline = run_from_codes("11--1", hard_classes=classes, forms="mmggm")
    current = run_from_codes("--111", hard_classes=classes, forms="mmggm")
    report = detect_regression(current, baseline, DEFAULT)
    assert report.hit_rate_delta(1) == 0.0 and report.hit_rate_delta(3) == 0.0
    assert report.is_regression is False
    by_class = {group.key: group for group in report.by_hard_class}
    assert list(by_class) == ["near-duplicate", "prose-free"]
    assert (by_class["near-duplicate"].delta(1), by_class["near-duplicate"].delta(3)) == (-1.0, -1.0)
    assert (by_class["prose-free"].delta(1), by_class["prose-free"].delta(3)) == (1.0, 1.0)
    assert by_class["near-duplicate"].questions == 2
    by_form = {group.key: group for group in report.by_form}
    assert by_form["match"].delta(1) == pytest.approx(-2 / 3)
    assert by_form["gap"].delta(1) == 1.0


def test_a_question_whose_hard_class_was_dropped_is_relabelled_and_left_out_of_the_class_deltas():
    baseline = run_from_codes("11", hard_classes=["boilerplate", None])
    current = run_from_codes("-1", hard_classes=[None, None])
    report = detect_regression(current, baseline, DEFAULT)
    assert report.set_changes.relabelled == ("q1",)
    assert report.by_hard_class == ()
    assert report.is_regression is False
    assert report.flipped_to_miss == ()


def test_flipped_questions_are_listed_both_ways():
    baseline = run_from_codes("113--3")
    current = run_from_codes("1-1-33")
    report = detect_regression(current, baseline, DEFAULT)
    assert report.flipped_to_miss == ("q2",)  # q2 hit -> miss
    assert report.flipped_to_hit == ("q3", "q5")  # q3 top-3 -> top-1, q5 miss -> top-3


def test_a_top1_hit_becoming_a_top3_hit_counts_as_flipped_to_miss():
    report = detect_regression(run_from_codes("3"), run_from_codes("1"), DEFAULT)
    assert report.flipped_to_miss == ("q1",)
    assert report.flipped_to_hit == ()


def test_summary_says_no_regression_with_both_deltas_in_percentage_points():
    baseline = run_from_codes("1" * 20)
    current = run_from_codes("1" * 19 + "-")
    assert detect_regression(current, baseline, DEFAULT).summary == "No regression: top-1 -5.0 pp, top-3 -5.0 pp."
    assert detect_regression(baseline, current, DEFAULT).summary == "No regression: top-1 +5.0 pp, top-3 +5.0 pp."


def test_summary_names_each_metric_that_dropped_and_by_how_much():
    baseline = run_from_codes("1111111111")
    current = run_from_codes("11111-----")
    summary = detect_regression(current, baseline, Tolerances(max_top1_drop=0.1, max_top3_drop=0.2)).summary
    assert summary == (
        "Regression: top-1 hit rate dropped 50.0 pp (tolerance 10.0 pp); top-3 hit rate dropped 50.0 pp (tolerance 20.0 pp). "
        "5 of the 5 lost hits have unjudged documents in their new top 3; counted as relevant they would bring every "
        "drop within its tolerance: judge them before trusting this."
    )


def test_summary_of_a_single_metric_regression_names_only_that_metric():
    summary = detect_regression(run_from_codes("1111133333"), run_from_codes("1111111111"), DEFAULT).summary
    assert summary == (
        "Regression: top-1 hit rate dropped 50.0 pp (tolerance 10.0 pp). "
        "5 of the 5 lost hits have unjudged documents in their new top 1; counted as relevant they would bring every "
        "drop within its tolerance: judge them before trusting this."
    )


def test_a_latency_tolerance_flags_a_slower_retriever():
    def run(latency):
        return RunResult("demo.set", "fixed", tuple(outcome(f"q{i}", "1", latency_ms=latency) for i in range(5)))

    report = detect_regression(run(80.0), run(20.0), Tolerances(max_p95_latency_increase_ms=50))
    assert report.is_regression is True
    assert report.p95_latency_delta_ms == 60.0
    assert "p95 latency rose 60.0 ms" in report.summary
    assert detect_regression(run(80.0), run(20.0), DEFAULT).is_regression is False


# --- significance -----------------------------------------------------------------------------


def binomial_two_sided(a, b):
    """Reference: scipy's exact binomial test when available, else the textbook sum."""
    try:
        from scipy.stats import binomtest
    except ImportError:  # pragma: no cover - scipy is present in the dev venv
        from math import comb

        n = a + b
        return 1.0 if n == 0 else min(1.0, 2 * sum(comb(n, i) for i in range(min(a, b) + 1)) / 2**n)
    return 1.0 if a + b == 0 else binomtest(min(a, b), a + b, 0.5).pvalue


def test_mcnemar_p_for_ten_one_sided_flips_is_two_in_1024():
    assert mcnemar_exact_p(0, 10) == 2 / 1024
    assert mcnemar_exact_p(10, 0) == 2 / 1024


def test_mcnemar_p_known_values():
    assert mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(1, 1) == 1.0
    assert mcnemar_exact_p(0, 1) == 1.0
    assert mcnemar_exact_p(1, 5) == pytest.approx(14 / 64)  # 2 * (1 + 6) / 2**6
    assert mcnemar_exact_p(2, 8) == pytest.approx(2 * (1 + 10 + 45) / 1024)


@pytest.mark.parametrize(("a", "b"), [(0, 3), (1, 4), (2, 9), (3, 3), (7, 2), (0, 20), (12, 30), (25, 25)])
def test_mcnemar_p_matches_the_exact_binomial_test(a, b):
    assert mcnemar_exact_p(a, b) == pytest.approx(binomial_two_sided(a, b), rel=1e-12)


def test_mcnemar_refuses_negative_counts():
    with pytest.raises(ValueError):
        mcnemar_exact_p(-1, 2)


def test_discordant_pairs_skip_questions_either_side_did_not_answer():
    first = [True, False, True, None, True]
    second = [False, True, True, True, None]
    answered = np.array([a is not None and b is not None for a, b in zip(first, second)])
    assert discordant_pairs(np.array(first, bool), np.array(second, bool), answered) == (1, 1)


def test_report_carries_the_paired_p_value_of_the_change():
    baseline = run_from_codes("1" * 10)
    current = run_from_codes("-" * 10)
    report = detect_regression(current, baseline, DEFAULT)
    assert report.hit_rate_p_value(1) == 2 / 1024
    assert report.hit_rate_p_value(3) == 2 / 1024
    assert detect_regression(baseline, baseline, DEFAULT).hit_rate_p_value(1) == 1.0
