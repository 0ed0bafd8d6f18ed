"""What a set can detect at 80% power: McNemar's sample size by the normal approximation, checked by
simulating the exact test on the sizes it gives."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval_pipeline.core.scoring.stats.power import POWER, detectable_drop, questions_needed
from retrieval_pipeline.core.scoring.stats.significance import mcnemar_exact_p


def simulated_power(questions: int, drop: float, flip_rate: float, significance: float, trials: int = 2000) -> float:
    """How often the exact McNemar test finds the drop: each question lost with chance f/2 + δ, gained
    with chance f/2, in `trials` sets of `questions`."""
    rng = np.random.default_rng(3)
    outcomes = rng.multinomial(questions, [flip_rate / 2 + drop, flip_rate / 2, 1 - flip_rate - drop], size=trials)
    return float(np.mean([mcnemar_exact_p(int(lost), int(gained)) <= significance for lost, gained, _ in outcomes]))


def test_the_size_for_a_ten_point_drop_on_a_noiseless_set_is_the_textbook_figure():
    # (1.95996 * sqrt(0.1) + 0.84162 * sqrt(0.1 - 0.01))^2 / 0.01 = 76.1
    assert questions_needed(0.1, 0.0, 0.05) == 77


@pytest.mark.parametrize(("drop", "flip_rate"), [(0.1, 0.0), (0.1, 0.1), (0.05, 0.04)])
def test_the_sizes_it_gives_catch_the_drop_about_80_percent_of_the_time(drop, flip_rate):
    needed = questions_needed(drop, flip_rate, 0.05)

    assert simulated_power(needed, drop, flip_rate, 0.05) == pytest.approx(POWER, abs=0.06)


def test_noise_needs_more_questions_and_hides_small_drops():
    assert questions_needed(0.1, 0.1, 0.05) > questions_needed(0.1, 0.02, 0.05) > questions_needed(0.1, 0.0, 0.05)
    assert detectable_drop(48, 0.1, 0.05) > detectable_drop(48, 0.0, 0.05) > detectable_drop(1000, 0.0, 0.05)


def test_the_detectable_drop_is_the_smallest_drop_its_set_size_suffices_for():
    drop = detectable_drop(200, 0.05, 0.05)

    assert questions_needed(drop, 0.05, 0.05) <= 200 < questions_needed(drop - 0.001, 0.05, 0.05)


def test_a_set_too_small_for_any_drop_and_a_zero_tolerance_get_none():
    assert detectable_drop(4, 0.0, 0.05) is None  # the exact test needs 6 one-way flips at 0.05
    assert questions_needed(0.0, 0.1, 0.05) is None


def test_levels_outside_0_and_1_are_refused():
    with pytest.raises(ValueError, match="significance and power"):
        questions_needed(0.1, 0.0, 1.5)
