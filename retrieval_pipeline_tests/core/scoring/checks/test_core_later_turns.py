"""A regression check of a run of conversations: its deltas by turn depth, and a drop confined to later
turns named as such in the verdict. Four conversations of three turns; outcomes as codes per turn."""

from __future__ import annotations

import pytest
from conversation_helpers import conversation_run

from retrieval_pipeline.core.scoring.checks.regression import detect_regression
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances

ALL_HIT = {"a": "111", "b": "111", "c": "111", "d": "111"}


def test_a_drop_confined_to_later_turns_is_named_as_such_in_the_verdict():
    baseline = conversation_run(ALL_HIT)
    current = conversation_run({"a": "111", "b": "11-", "c": "11-", "d": "1-1"})
    report = detect_regression(current, baseline, Tolerances())
    # depth 1 holds at 4/4; depth 2 falls to 3/4 (-25 pp), depth 3 to 2/4 (-50 pp), at top-1 and top-3 alike
    assert report.is_regression
    assert "Drop confined to later turns: top-1 at turn depth 2 dropped 25.0 pp, depth 3 dropped 50.0 pp" in report.summary
    assert "while depth 1 held (+0.0 pp)" in report.summary
    deltas = {d.key: (d.questions, d.delta(1), d.delta(3)) for d in report.by_turn_depth}
    assert deltas == {"1": (4, 0.0, 0.0), "2": (4, -0.25, -0.25), "3": (4, -0.5, -0.5)}
    assert report.deltas_by("turn_depth") == report.by_turn_depth


def test_a_drop_that_reaches_the_opening_turns_is_not_called_confined_to_later_turns():
    baseline = conversation_run(ALL_HIT)
    current = conversation_run({"a": "-11", "b": "-1-", "c": "11-", "d": "1-1"})
    report = detect_regression(current, baseline, Tolerances())
    assert report.is_regression
    assert dict((d.key, d.delta(1)) for d in report.by_turn_depth)["1"] == pytest.approx(-0.5)
    assert "later turns" not in report.summary


def test_a_later_turn_drop_within_tolerance_is_not_named():
    baseline = conversation_run(ALL_HIT)
    current = conversation_run({"a": "111", "b": "11-", "c": "111", "d": "111"})  # depth 3 loses 25 pp
    report = detect_regression(current, baseline, Tolerances(max_top1_drop=0.3, max_top3_drop=0.3))
    assert not report.is_regression and "later turns" not in report.summary
