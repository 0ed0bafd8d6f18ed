"""Verdicts that say when the labels, not the retriever, are in doubt: lost hits with unjudged documents."""

from __future__ import annotations

import pytest

from retrieval_pipeline.core.scoring.checks.regression import detect_regression
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.checks.verdicts import Verdict
from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult

QUESTIONS = 20


def swap_run(
    retriever: str, rankings: dict[int, tuple[str, ...]], expected: dict[int, tuple[str, ...]] | None = None
) -> RunResult:
    """20 questions, each expecting `t<i>` (or `expected[i]`) and rejecting `r<i>`; question i ranks
    `rankings[i]`, else its answer."""
    expected = expected or {}
    return RunResult(
        "demo.set",
        retriever,
        tuple(
            QuestionResult(
                f"q{i}",
                "gap",
                None,
                expected.get(i, (f"t{i}",)),
                rankings.get(i, (f"t{i}",)),
                1.0,
                fingerprint=f"f{i}",
                rejected_document_ids=(f"r{i}",),
            )
            for i in range(QUESTIONS)
        ),
    )


def swap_latency(run: RunResult, latency_ms: float) -> RunResult:
    """The same run, every question answered in `latency_ms`."""
    return RunResult(
        "demo.set",
        run.retriever_identifier,
        tuple(
            QuestionResult(
                q.question_id,
                q.form,
                None,
                q.expected_document_ids,
                q.retrieved_document_ids,
                latency_ms,
                fingerprint=q.fingerprint,
                rejected_document_ids=q.rejected_document_ids,
            )
            for q in run.questions
        ),
    )


def embedding_swap(unjudged: int, judged: int) -> tuple[RunResult, RunResult]:
    """The new retriever loses `unjudged + judged` hits: the first ones to documents nobody judged, the
    others to documents judged not to answer."""
    rankings = {i: ("new-a", f"new-b{i}", "new-c") for i in range(unjudged)}
    rankings |= {i: (f"r{i}",) for i in range(unjudged, unjudged + judged)}
    return swap_run("dense", rankings), swap_run("dense", {})


def test_a_regression_the_unjudged_documents_could_not_clear_keeps_their_count_out_of_the_verdict():
    current, baseline = embedding_swap(unjudged=7, judged=5)  # counted relevant, 5 lost hits remain: 25 pp

    report = detect_regression(current, baseline, Tolerances())

    assert report.verdict is Verdict.REGRESSION
    assert report.unjudged_losses.lost == 12 and report.unjudged_losses.unjudged == tuple(f"q{i}" for i in range(7))
    assert report.unjudged_losses.could_clear is False
    assert report.summary == (
        "Regression: top-1 hit rate dropped 60.0 pp (tolerance 10.0 pp); top-3 hit rate dropped 60.0 pp (tolerance 10.0 pp)."
    )


def test_a_regression_the_unjudged_documents_could_clear_tells_to_judge_them_before_trusting_it():
    current, baseline = embedding_swap(unjudged=3, judged=1)  # counted relevant, 1 lost hit of 20 remains: 5 pp

    report = detect_regression(current, baseline, Tolerances())

    assert report.verdict is Verdict.REGRESSION and report.unjudged_losses.could_clear is True
    assert report.summary.endswith(
        "3 of the 4 lost hits have unjudged documents in their new top 3; counted as relevant they would bring every "
        "drop within its tolerance: judge them before trusting this."
    )


def test_an_improvement_says_nothing_of_the_lost_hits_with_unjudged_documents_but_keeps_their_count():
    baseline = swap_run("dense", {i: ("x",) for i in range(10, 16)} | {i: ("r0",) for i in range(16, 20)})
    current = swap_run("dense", {i: (f"new-{i}",) for i in range(3)})  # 3 hits lost to unjudged documents, 10 won

    report = detect_regression(current, baseline, Tolerances())

    assert report.verdict is Verdict.PASS
    assert report.summary == "No regression: top-1 +35.0 pp, top-3 +35.0 pp."
    assert report.unjudged_losses.unjudged == ("q0", "q1", "q2") and report.unjudged_losses.lost == 3


def test_a_regression_with_a_latency_rise_never_blames_the_unjudged_documents():
    current, baseline = embedding_swap(unjudged=3, judged=0)
    slower = swap_latency(current, 500.0)

    report = detect_regression(slower, baseline, Tolerances(max_p95_latency_increase_ms=10))

    assert report.verdict is Verdict.REGRESSION and report.unjudged_losses.could_clear is False
    assert "unjudged" not in report.summary


def test_a_ranking_metric_drop_counts_when_the_unjudged_documents_are_counted_relevant():
    """Counted relevant, the lost hits come back at top-1 and top-3, yet a drop of a gated ranking metric
    stays: the unjudged documents cannot clear the regression."""
    expected = {i: (f"t{i}", f"t{i}-b") for i in range(4)}
    baseline = swap_run("dense", {i: (f"t{i}", f"t{i}-b") for i in range(4)}, expected)
    current = swap_run("dense", {i: ("new-a",) for i in range(4)}, expected)

    report = detect_regression(current, baseline, Tolerances(max_recall_drop=0.01))

    assert report.verdict is Verdict.REGRESSION and report.unjudged_losses.unjudged == ("q0", "q1", "q2", "q3")
    assert report.unjudged_losses.could_clear is False
    assert "judge them" not in report.summary


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


def test_a_drop_within_tolerance_keeps_the_unjudged_lost_hits_out_of_its_verdict_but_counts_them():
    current, baseline = embedding_swap(unjudged=1, judged=0)

    report = detect_regression(current, baseline, Tolerances(max_unjudged_share=0.5))

    assert report.verdict is Verdict.PASS
    assert report.summary == "No regression: top-1 -5.0 pp, top-3 -5.0 pp."
    assert report.unjudged_losses.unjudged == ("q0",) and report.unjudged_losses.lost == 1


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
