"""Verdicts that say when the labels, not the retriever, are in doubt: lost hits with unjudged documents."""

from __future__ import annotations

import pytest

from retrieval_pipeline.core.scoring.regression import detect_regression
from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
from retrieval_pipeline.core.scoring.tolerances import Tolerances
from retrieval_pipeline.core.scoring.verdicts import Verdict

QUESTIONS = 20


def swap_run(retriever: str, rankings: dict[int, tuple[str, ...]]) -> RunResult:
    """20 questions, each expecting `t<i>` and rejecting `r<i>`; question i ranks `rankings[i]`, else its answer."""
    return RunResult(
        "demo.set",
        retriever,
        tuple(
            QuestionResult(
                f"q{i}",
                "gap",
                None,
                (f"t{i}",),
                rankings.get(i, (f"t{i}",)),
                1.0,
                fingerprint=f"f{i}",
                rejected_document_ids=(f"r{i}",),
            )
            for i in range(QUESTIONS)
        ),
    )


def embedding_swap(unjudged: int, judged: int) -> tuple[RunResult, RunResult]:
    """The new retriever loses `unjudged + judged` hits: the first ones to documents nobody judged, the
    others to documents judged not to answer."""
    rankings = {i: ("new-a", f"new-b{i}", "new-c") for i in range(unjudged)}
    rankings |= {i: (f"r{i}",) for i in range(unjudged, unjudged + judged)}
    return swap_run("dense", rankings), swap_run("dense", {})


def test_a_regression_counts_the_lost_hits_with_unjudged_documents_in_their_place():
    current, baseline = embedding_swap(unjudged=7, judged=5)

    report = detect_regression(current, baseline, Tolerances())

    assert report.verdict is Verdict.REGRESSION
    assert report.unjudged_losses.lost == 12 and report.unjudged_losses.unjudged == tuple(f"q{i}" for i in range(7))
    assert report.summary.startswith("Regression: top-1 hit rate dropped 60.0 pp")
    assert report.summary.endswith(
        "7 of the 12 lost hits have unjudged documents in their new top 3: judge them before trusting this."
    )


def test_past_max_unjudged_share_the_drop_is_inconclusive_unjudged():
    current, baseline = embedding_swap(unjudged=7, judged=5)

    report = detect_regression(current, baseline, Tolerances(max_unjudged_share=0.5))

    assert report.verdict is Verdict.INCONCLUSIVE and report.is_inconclusive and not report.is_regression
    assert report.summary.startswith("Inconclusive: unjudged: top-1 hit rate dropped 60.0 pp (tolerance 10.0 pp)")
    assert "7 of the 12 lost hits" in report.summary


@pytest.mark.parametrize(
    ("share", "verdict"), [(0.6, Verdict.REGRESSION), (7 / 12, Verdict.REGRESSION), (0.58, Verdict.INCONCLUSIVE)]
)
def test_only_strictly_more_lost_hits_than_the_share_make_a_drop_inconclusive(share, verdict):
    current, baseline = embedding_swap(unjudged=7, judged=5)
    assert detect_regression(current, baseline, Tolerances(max_unjudged_share=share)).verdict is verdict


def test_lost_hits_judged_not_to_answer_are_a_regression_whatever_the_share():
    current, baseline = embedding_swap(unjudged=0, judged=12)

    report = detect_regression(current, baseline, Tolerances(max_unjudged_share=0.0))

    assert report.verdict is Verdict.REGRESSION and report.unjudged_losses.unjudged == ()
    assert "unjudged" not in report.summary


def test_a_drop_within_tolerance_still_says_which_lost_hits_have_unjudged_documents():
    current, baseline = embedding_swap(unjudged=1, judged=0)

    report = detect_regression(current, baseline, Tolerances(max_unjudged_share=0.5))

    assert report.verdict is Verdict.PASS
    assert report.summary == (
        "No regression: top-1 -5.0 pp, top-3 -5.0 pp. "
        "1 of the 1 lost hits have unjudged documents in their new top 3: judge them before trusting this."
    )


def test_a_hit_lost_only_at_top_1_is_read_at_its_new_top_1():
    current = swap_run("dense", {0: ("new-a", "t0"), 1: ("r1", "t1")})
    baseline = swap_run("dense", {})

    losses = detect_regression(current, baseline, Tolerances()).unjudged_losses

    assert (losses.lost, losses.unjudged, losses.depths) == (2, ("q0",), (1,))
    assert "in their new top 1:" in losses.sentence()


def test_a_latency_rise_stays_a_regression_when_unjudged_documents_explain_the_drop():
    current, baseline = embedding_swap(unjudged=7, judged=0)
    slower = RunResult(
        "demo.set",
        "dense",
        tuple(
            QuestionResult(
                q.question_id,
                q.form,
                None,
                q.expected_document_ids,
                q.retrieved_document_ids,
                500.0,
                None,
                q.fingerprint,
                q.rejected_document_ids,
            )
            for q in current.questions
        ),
    )

    report = detect_regression(slower, baseline, Tolerances(max_unjudged_share=0.5, max_p95_latency_increase_ms=10))

    assert report.verdict is Verdict.REGRESSION
    assert report.summary.startswith("Regression: p95 latency rose") and "Inconclusive: unjudged: top-1" in report.summary


@pytest.mark.parametrize("share", [1.5, -0.1, float("nan")])
def test_max_unjudged_share_must_be_a_fraction(share):
    with pytest.raises(ValueError, match="max_unjudged_share"):
        Tolerances(max_unjudged_share=share)
