"""Rescoring: a stored baseline scored again under today's labels keeps relabelled questions compared,
exactly as a fresh run of the same rankings would score them, and never rewrites a stored file."""

from __future__ import annotations

from dataclasses import replace

from core_helpers import question, question_set, retriever_for

from retrieval_pipeline.core.scoring.checks.verdicts import Verdict
from retrieval_pipeline.core.scoring.rescoring import rescored
from retrieval_pipeline.core.scoring.scoring import CutOffs
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy, run_question_set
from retrieval_pipeline.core.storage.store import ResultStore

NO_WAIT = EvaluationSettings(retry=RetryPolicy(attempts=1, backoff_seconds=0))
RANKINGS = {f"q{i}": [f"x{i}", f"d{i}", f"y{i}", f"e{i}"] for i in range(1, 7)}
OLD = question_set(*(question(f"q{i}", (f"d{i}",), form="gap" if i % 2 else "match") for i in range(1, 7)))


def relabelled(base=OLD, field="expected_document_ids", **labels):
    """`base` with the given questions' `field` replaced (`q1=("x1",)`)."""
    return question_set(*(q.model_copy(update={field: labels.get(q.id, getattr(q, field))}) for q in base.questions))


def judged_no(base=OLD, **rejected):
    """`base` after a judging round answered `no` for these documents (`q1=("x1",)`)."""
    return relabelled(base, "rejected_document_ids", **rejected)


def test_a_rescored_run_scores_exactly_as_a_fresh_run_of_the_same_rankings_under_the_new_labels():
    new = relabelled(q1=("x1",), q2=("nowhere",), q3=("d3", "y3"))
    cutoffs = CutOffs((1, 3, 5))
    old_run = run_question_set(OLD, retriever_for(RANKINGS, OLD), cutoffs=cutoffs)
    fresh = run_question_set(new, retriever_for(RANKINGS, new), cutoffs=cutoffs)

    rescoring = rescored(old_run, new)

    assert rescoring.relabelled == ("q1", "q2", "q3") and rescoring.refused is None
    again = rescoring.run
    assert [again.hit_rate(k) for k in (1, 3, 5)] == [fresh.hit_rate(k) for k in (1, 3, 5)]
    assert again.metrics() == fresh.metrics()
    assert again.questions.values("fingerprint") == fresh.questions.values("fingerprint")
    assert old_run.hit_rate(1) == 0.0 and again.hit_rate(1) == 1 / 6  # q1's new label is its first document


def test_a_reworded_question_is_not_rescored_its_ranking_answered_another_text():
    reworded = question_set(
        *(
            q.model_copy(update={"question": q.question + " (reworded)", "expected_document_ids": ("x1",)}) if q.id == "q1" else q
            for q in OLD.questions
        )
    )
    old_run = run_question_set(OLD, retriever_for(RANKINGS, OLD))

    assert rescored(old_run, reworded).relabelled == ()


def test_a_question_that_only_gained_rejected_ids_stays_compared_and_scores_as_before(tmp_path):
    store = ResultStore(str(tmp_path / "results"))
    evaluate_and_record(OLD, retriever_for(RANKINGS, OLD), store, NO_WAIT)
    judged = judged_no(q1=("x1",), q2=("x2", "y2"), q3=("x3",))

    report = evaluate_and_record(judged, retriever_for(RANKINGS, judged), store, NO_WAIT).report

    changes = report.set_changes
    assert (changes.relabelled, changes.rescored, changes.compared) == (("q1", "q2", "q3"),) * 2 + (6,)
    assert (report.verdict, report.hit_rate_delta(1), report.hit_rate_delta(3), report.flipped_to_miss) == (
        Verdict.PASS,
        0.0,
        0.0,
        (),
    )
    assert changes.not_rescored_questions == ()


def test_a_relabelled_question_that_has_rejected_ids_is_rescored(tmp_path):
    store = ResultStore(str(tmp_path / "results"))
    judged = judged_no(q1=("x1",), q2=("x2",))
    evaluate_and_record(judged, retriever_for(RANKINGS, judged), store, NO_WAIT)
    fixed = relabelled(judged, q1=("y1",), q3=("x3",))

    report = evaluate_and_record(fixed, retriever_for(RANKINGS, fixed), store, NO_WAIT).report

    assert (report.set_changes.rescored, report.set_changes.compared) == (("q1", "q3"), 6)
    assert (report.hit_rate_delta(1), report.hit_rate_delta(3), report.flipped_to_hit) == (0.0, 0.0, ())


def test_a_reworded_question_is_named_with_why_it_was_left_out(tmp_path):
    store = ResultStore(str(tmp_path / "results"))
    evaluate_and_record(OLD, retriever_for(RANKINGS, OLD), store, NO_WAIT)
    edited = question_set(
        *(
            q.model_copy(update={"question": q.question + " (reworded)"}) if q.id == "q2" else q
            for q in judged_no(q1=("x1",)).questions
        )
    )

    report = evaluate_and_record(edited, retriever_for(RANKINGS, edited), store, NO_WAIT).report

    changes = report.set_changes
    assert (changes.rescored, changes.compared) == (("q1",), 5)
    assert changes.not_rescored_questions == (("q2", "asked with another text: its stored ranking answered another question"),)
    assert report.summary.endswith(
        "Baseline rescored under the current labels: 1 relabelled question kept, 1 left out: "
        "q2 (asked with another text: its stored ranking answered another question)."
    )


def test_relabelled_questions_stay_compared_and_a_label_fix_is_no_regression(tmp_path):
    store = ResultStore(str(tmp_path / "results"))
    evaluate_and_record(OLD, retriever_for(RANKINGS, OLD), store, NO_WAIT)
    fixed = relabelled(q1=("x1",), q2=("x2",), q3=("x3",), q4=("x4",))

    report = evaluate_and_record(fixed, retriever_for(RANKINGS, fixed), store, NO_WAIT).report

    assert report.verdict is Verdict.PASS
    assert report.set_changes.rescored == ("q1", "q2", "q3", "q4") and report.set_changes.compared == 6
    assert (report.hit_rate_delta(1), report.flipped_to_hit) == (0.0, ())  # the fix is not credited to the retriever
    assert report.summary.endswith("Baseline rescored under the current labels: 4 relabelled questions kept.")


def test_a_real_drop_on_a_relabelled_question_is_caught_once_the_baseline_is_rescored(tmp_path):
    store = ResultStore(str(tmp_path / "results"))
    evaluate_and_record(OLD, retriever_for(RANKINGS, OLD), store, NO_WAIT)
    fixed = relabelled(q1=("x1",), q2=("x2",))
    worse = {**RANKINGS, "q1": ["z"], "q2": ["z"]}
    settings = replace(NO_WAIT, tolerances=NO_WAIT.tolerances.replaced(max_top3_drop=0.5))

    report = evaluate_and_record(fixed, retriever_for(worse, fixed), store, settings).report

    assert report.verdict is Verdict.REGRESSION
    assert report.flipped_to_miss == ("q1", "q2")


def test_rescoring_never_rewrites_a_stored_file(tmp_path):
    store = ResultStore(str(tmp_path / "results"))
    evaluate_and_record(OLD, retriever_for(RANKINGS, OLD), store, NO_WAIT)
    before = {path: path.read_bytes() for path in (tmp_path / "results").rglob("*") if path.is_file()}
    fixed = relabelled(q1=("x1",))

    evaluate_and_record(fixed, retriever_for(RANKINGS, fixed), store, NO_WAIT)

    assert all(path.read_bytes() == content for path, content in before.items())


def test_a_baseline_kept_shallower_than_the_run_keeps_relabelled_hits_out_and_judged_no_questions_in(tmp_path):
    store = ResultStore(str(tmp_path / "results"))
    evaluate_and_record(OLD, retriever_for(RANKINGS, OLD), store, NO_WAIT)
    fixed = judged_no(relabelled(q1=("x1",)), q2=("x2",))
    deeper = replace(NO_WAIT, cutoffs=CutOffs((1, 3, 5)))

    report = evaluate_and_record(fixed, retriever_for(RANKINGS, fixed), store, deeper).report

    changes = report.set_changes
    assert (changes.relabelled, changes.rescored, changes.compared) == (("q1", "q2"), ("q2",), 5)
    shallow = "its ids were kept to rank 3 only, this run is scored to rank 5"
    assert changes.not_rescored_questions == (("q1", shallow),) and changes.not_rescored is None
    assert report.summary.endswith(
        f"Baseline rescored under the current labels: 1 relabelled question kept, 1 left out: q1 ({shallow})."
    )


def test_a_baseline_kept_shallower_than_the_run_is_not_rescored_and_the_verdict_names_what_it_left_out(tmp_path):
    store = ResultStore(str(tmp_path / "results"))
    evaluate_and_record(OLD, retriever_for(RANKINGS, OLD), store, NO_WAIT)
    fixed = relabelled(q1=("x1",))
    deeper = replace(NO_WAIT, cutoffs=CutOffs((1, 3, 5)))

    report = evaluate_and_record(fixed, retriever_for(RANKINGS, fixed), store, deeper).report

    changes = report.set_changes
    assert (changes.rescored, changes.compared) == ((), 5)
    assert changes.not_rescored_questions == (("q1", "its ids were kept to rank 3 only, this run is scored to rank 5"),)
    assert report.summary.endswith(
        "Baseline not rescored under the current labels: 1 relabelled question left out: "
        "q1 (its ids were kept to rank 3 only, this run is scored to rank 5)."
    )
