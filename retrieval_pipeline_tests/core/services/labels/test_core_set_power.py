"""The audit's power statement: the flip rate measured on a pair's history, then the smallest drop the
set catches at 80% power and the questions the configured tolerances need."""

from __future__ import annotations

from dataclasses import replace

import pytest
from core_helpers import question, question_set, run_from_codes

from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.stats.power import detectable_drop, questions_needed
from retrieval_pipeline.core.services.labels.set_power import set_power

SET = question_set(*(question(f"q{i}") for i in range(1, 11)))


def test_the_flip_rate_is_the_share_of_questions_whose_hit_changed_between_consecutive_runs():
    runs = [run_from_codes(codes) for codes in ("1111111111", "-111111111", "1111111111", "1111111113")]

    power = set_power(SET, {"bm25": runs}, Tolerances(max_top1_drop=0.2))

    top1, top3 = power.cutoffs
    assert power.run_pairs == 3 and power.questions == 10
    assert (top1.flip_rate, top3.flip_rate) == (pytest.approx(3 / 30), pytest.approx(2 / 30))
    assert top1.detectable_drop == detectable_drop(10, 3 / 30, 0.05)
    assert (top1.tolerance, top1.questions_needed) == (0.2, questions_needed(0.2, 3 / 30, 0.05))
    assert top3.questions_needed == questions_needed(0.1, 2 / 30, 0.05)
    assert power.sentence.startswith(
        "Power 80.0% (McNemar, significance 0.05, flip rate top-1 10.0%, top-3 6.7% over 3 run pairs) on 10 questions: "
    )


def test_runs_on_different_index_versions_are_no_measure_of_noise():
    runs = [
        replace(run_from_codes(codes), index_version=version) for codes, version in (("1111111111", "a"), ("----------", "b"))
    ]

    power = set_power(SET, {"bm25": runs}, Tolerances(min_significance=0.01))

    assert power.run_pairs == 0 and power.cutoffs[0].flip_rate == 0.0 and power.significance == 0.01
    assert "no repeated runs to measure a flip rate, taken as 0" in power.sentence
    assert power.cutoffs[0].sentence == (
        f"top-1: smallest detectable drop 84.5 pp; {questions_needed(0.1, 0.0, 0.01)} questions to detect the 10.0 pp tolerance"
    )
