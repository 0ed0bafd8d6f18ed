"""Figures by turn: the rates at each turn depth, the conversations all hit, and the gap beside a rewrite run.

The set: three conversations ("wings" of 3 turns, "flow" of 2, "heat" of 5) and two single questions, each
turn's outcome written as a code ("1" top-1 hit, "3" top-3 hit only, "-" miss). Every expectation below is
counted by hand from the codes.
"""

from __future__ import annotations

import pytest
from conversation_helpers import conversation_run
from core_helpers import run_from_codes

from retrieval_pipeline.core.scoring.stats.slice_tests import paired_slice_tests
from retrieval_pipeline.core.scoring.turns import conversations_all_hit, rewrite_gap, turn_figures

ASKED = {"wings": "113", "flow": "1-", "heat": "11-31"}
REWRITTEN = {"wings": "111", "flow": "11", "heat": "11111"}


def counts(breakdown):
    return {key: (rates.questions, rates.hit_count(1), rates.hit_count(3)) for key, rates in breakdown.items()}


def test_a_run_of_conversations_reports_top1_and_top3_by_turn_depth_with_later_turns_pooled():
    run = conversation_run(ASKED, singles="1-")
    # depth 1: wings 1, flow 1, heat 1; depth 2: wings 1, flow -, heat 1; depth 3: wings 3, heat -;
    # 4+: heat's turns 4 (3) and 5 (1); the single questions have no depth
    assert counts(run.by_turn_depth()) == {"1": (3, 3, 3), "2": (3, 2, 2), "3": (2, 0, 1), "4+": (2, 1, 2)}
    assert list(run.by_turn_depth()) == ["1", "2", "3", "4+"]
    assert (run.hit_count(1), run.hit_count(3), run.question_count) == (7, 9, 12)  # the usual figures over all turns
    assert counts(run.by_form()) == {"match": (10, 6, 8), "gap": (2, 1, 1)}


def test_each_turn_keeps_its_conversation_and_number_and_a_single_question_has_neither():
    run = conversation_run({"wings": "11"}, singles="1")
    assert [(q.question_id, q.conversation, q.turn) for q in run.questions] == [
        ("wings/1", "wings", 1),
        ("wings/2", "wings", 2),
        ("q1", None, None),
    ]


def test_the_conversations_all_hit_count_those_whose_every_turn_hits_in_the_top_3():
    hit = conversations_all_hit(conversation_run(ASKED, singles="1-"))
    assert (hit.conversations, hit.all_hit, hit.k) == (3, 1, 3)  # wings (1, 1, 3) only; flow and heat miss once
    assert hit.rate == pytest.approx(1 / 3)
    assert hit.key == "conversations_all_hit@3"


def test_a_run_of_single_questions_has_no_figures_by_turn():
    run = run_from_codes("13-")
    assert run.by_turn_depth() == {}
    assert conversations_all_hit(run) is None and turn_figures(run) is None


def test_the_rewrite_gap_is_the_rate_on_turns_as_asked_minus_the_rate_on_rewrites_overall_and_by_depth():
    asked = conversation_run(ASKED, singles="1-")
    rewritten = conversation_run(REWRITTEN, singles="1-", retriever="bm25_rewrite", rewrite=True)
    gap = rewrite_gap(asked, rewritten)
    assert (gap.rewrite_retriever, gap.rewrite_run_id, gap.turns) == ("bm25_rewrite", rewritten.run_id, 10)
    # on the 10 turns alone (the single questions are asked the same in both): top-1 6/10 against 10/10,
    # top-3 8/10 against 10/10
    assert gap.delta(1) == pytest.approx(-0.4) and gap.delta(3) == pytest.approx(-0.2)
    by_depth = {d.key: (d.questions, d.delta(1), d.delta(3)) for d in gap.by_depth}
    assert by_depth == {
        "1": (3, 0.0, 0.0),
        "2": (3, pytest.approx(-1 / 3), pytest.approx(-1 / 3)),
        "3": (2, -1.0, -0.5),
        "4+": (2, -0.5, 0.0),
    }
    assert gap.all_hit_delta == pytest.approx(1 / 3 - 1)
    assert gap.as_dict()["by_turn_depth"][2] == {"key": "3", "turns": 2, "top1_gap": -1.0, "top3_gap": -0.5}


def test_the_rewrite_gap_needs_turns_both_runs_hold():
    assert rewrite_gap(run_from_codes("11"), run_from_codes("11", retriever_identifier="other")) is None


def test_paired_tests_cover_each_turn_depth_as_a_slice():
    first = conversation_run(REWRITTEN, singles="1-")
    second = conversation_run(ASKED, singles="1-", retriever="other")
    depth_tests = {(t.key, t.k): (t.questions, t.delta) for t in paired_slice_tests(first, second) if t.slice == "turn_depth"}
    assert depth_tests[("3", 1)] == (2, -1.0)
    assert depth_tests[("4+", 3)] == (2, 0.0)
    assert sorted({key for key, _ in depth_tests}) == ["1", "2", "3", "4+"]
