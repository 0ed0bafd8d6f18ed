"""Property: whatever was edited in the set (questions added, removed, relabelled) and whatever either
run retrieved, the verdict is the one computed on the unchanged questions alone."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_pipeline.core.golden.fingerprints import question_fingerprint
from retrieval_pipeline.core.scoring.checks.regression import detect_regression
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.checks.verdicts import Verdict
from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult

DOCUMENTS = ("d1", "d2", "d3", "d4", "d5")
RELABELLED_TO = ("r1", "r2")  # never among a question's original labels: a relabel always changes them
rankings = st.lists(st.sampled_from(DOCUMENTS + RELABELLED_TO), max_size=4)
labelled_question = st.tuples(
    st.lists(st.sampled_from(DOCUMENTS), max_size=2, unique=True),
    st.sampled_from(("match", "gap")),
    st.sampled_from((None, "normal", "near-duplicate")),
)
edit = st.sampled_from(("keep", "keep", "remove", "relabel"))
tolerance = st.sampled_from((0.0, 0.1, 0.25))
significance = st.sampled_from((None, 0.05, 0.5))
metric_tolerance = st.sampled_from((None, 0.0, 0.2))


def outcome(question_id: str, labels, ranking) -> QuestionResult:
    expected, form, hard_class = labels
    return QuestionResult(
        question_id=question_id,
        form=form,
        hard_class=hard_class,
        expected_document_ids=tuple(expected),
        retrieved_document_ids=tuple(dict.fromkeys(ranking))[:3],
        latency_ms=1.0,
        fingerprint=question_fingerprint(f"text of {question_id}", expected, form, hard_class),
    )


@st.composite
def edited_pair(draw):
    """(baseline run, current run, ids of the questions the edit left alone)."""
    size = draw(st.integers(1, 10))
    original = [draw(labelled_question) for _ in range(size)]
    edits = [draw(edit) for _ in range(size)]
    added = [draw(labelled_question) for _ in range(draw(st.integers(0, 3)))]
    baseline = [outcome(f"q{i}", labels, draw(rankings)) for i, labels in enumerate(original)]
    current, unchanged = [], []
    for i, (labels, change) in enumerate(zip(original, edits)):
        if change == "remove":
            continue
        if change == "relabel":
            labels = (draw(st.lists(st.sampled_from(RELABELLED_TO), min_size=1, unique=True)), *labels[1:])
        else:
            unchanged.append(f"q{i}")
        current.append(outcome(f"q{i}", labels, draw(rankings)))
    current += [outcome(f"new{i}", labels, draw(rankings)) for i, labels in enumerate(added)]
    order = draw(st.permutations(current))
    return RunResult("s", "r", tuple(baseline)), RunResult("s", "r", tuple(order)), unchanged


def alone(run: RunResult, ids: list[str]) -> RunResult:
    """The run as if the set had only ever held these questions (a new run, built independently)."""
    return RunResult("s", "r", tuple(q for q in run.questions if q.question_id in ids), run_id=run.run_id)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(edited_pair(), tolerance, tolerance, significance, metric_tolerance)
def test_the_verdict_over_an_edited_set_equals_the_verdict_on_the_unchanged_questions_alone(pair, top1, top3, alpha, mrr):
    baseline, current, unchanged = pair
    tolerances = Tolerances(max_top1_drop=top1, max_top3_drop=top3, min_significance=alpha, max_mrr_drop=mrr)

    report = detect_regression(current, baseline, tolerances)

    assert report.set_changes.compared == len(unchanged)
    if not unchanged:
        assert report.verdict is Verdict.NOT_COMPARABLE
        return
    expected = detect_regression(alone(current, unchanged), alone(baseline, unchanged), tolerances)
    assert report.verdict is expected.verdict
    assert (report.hit_rate_delta(1), report.hit_rate_delta(3)) == (expected.hit_rate_delta(1), expected.hit_rate_delta(3))
    assert (report.hit_rate_p_value(1), report.hit_rate_p_value(3)) == (
        expected.hit_rate_p_value(1),
        expected.hit_rate_p_value(3),
    )
    assert set(report.flipped_to_miss) == set(expected.flipped_to_miss)
    assert set(report.flipped_to_hit) == set(expected.flipped_to_hit)
    assert set(report.by_form) == set(expected.by_form)
    assert set(report.by_hard_class) == set(expected.by_hard_class)
    # The uncertainty figures too: slice tests (their order follows the current run's), the detectable drop,
    # the ranking-metric deltas (sums over a different question order may differ in the last bit).
    assert set(report.slice_tests) == set(expected.slice_tests)
    assert report.minimum_detectable_drop == expected.minimum_detectable_drop
    assert dict(report.metric_deltas) == pytest.approx(dict(expected.metric_deltas), abs=1e-12)
