"""Golden-set versions: every stored run says which version of its set it measured, and an edit to the
set (a question added, removed, reworded or relabelled) is never counted as a retriever change."""

from __future__ import annotations

from dataclasses import replace

import pyarrow.parquet as pq
import pytest
from core_helpers import question, question_set, retriever_for

from retrieval_pipeline.core.golden.fingerprints import question_fingerprint
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.checks.verdicts import Verdict
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.history import run_history
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

NO_WAIT = EvaluationSettings(retry=RetryPolicy(attempts=1, backoff_seconds=0))
ORIGINAL = question_set(*(question(f"q{i}", (f"d{i}",), form="gap" if i % 2 else "match") for i in range(1, 9)))
HITS = {f"q{i}": [f"d{i}"] for i in range(1, 10)}


@pytest.fixture
def store(tmp_path):
    return ResultStore(str(tmp_path / "results"))


def answering(rankings, questions):
    """A retriever giving each question of `questions` its ranking in `rankings` (none for the others)."""
    ids = {q.id for q in questions.questions}
    return retriever_for({qid: ranking for qid, ranking in rankings.items() if qid in ids}, questions)


def edited(*, relabel=(), remove=(), add=(), reword=()):
    """ORIGINAL with some questions pointed at another document, removed, reworded, or new ones added."""
    questions = []
    for q in ORIGINAL.questions:
        if q.id in remove:
            continue
        if q.id in relabel:
            q = q.model_copy(update={"expected_document_ids": ("elsewhere",)})
        if q.id in reword:
            q = q.model_copy(update={"question": q.question + " (reworded)"})
        questions.append(q)
    return question_set(*questions, *(question(qid, ("d9",)) for qid in add))


def test_the_fingerprint_covers_text_and_labels_but_not_the_order_of_expected_ids():
    base = question_fingerprint("why?", ["a", "b"], "match", None)
    assert question_fingerprint("why?", ["b", "a"], "match", None) == base
    for changed in (
        ("why not?", ["a", "b"], "match", None),
        ("why?", ["a"], "match", None),
        ("why?", ["a", "b"], "gap", None),
        ("why?", ["a", "b"], "match", "normal"),
    ):
        assert question_fingerprint(*changed) != base


def test_stored_runs_carry_question_and_set_fingerprints_that_an_answer_gist_edit_leaves_alone(store):
    evaluation = evaluate_and_record(ORIGINAL, answering(HITS, ORIGINAL), store, NO_WAIT)
    questions = pq.read_table(store.questions_uri(evaluation.stored)).to_pydict()
    summary = pq.read_table(store.summary_uri(evaluation.stored)).to_pylist()[0]
    assert len(set(questions["question_fingerprint"])) == 8
    assert summary["set_fingerprint"] == evaluation.run.set_fingerprint is not None
    assert summary["verdict"] == "baseline" and summary["baseline_run_id"] is None
    assert store.load(evaluation.stored) == evaluation.run

    gist = question_set(*(q.model_copy(update={"answer_gist": "documented"}) for q in ORIGINAL.questions))
    again = evaluate_and_record(gist, answering(HITS, gist), store, NO_WAIT)
    assert again.run.set_fingerprint == evaluation.run.set_fingerprint
    assert again.report.set_changes.changed is False


def test_relabelling_questions_with_the_retriever_unchanged_is_never_a_regression(store):
    evaluate_and_record(ORIGINAL, answering(HITS, ORIGINAL), store, NO_WAIT)
    relabelled = edited(relabel=("q1", "q2", "q3", "q4"))

    evaluation = evaluate_and_record(relabelled, answering(HITS, relabelled), store, NO_WAIT)

    assert evaluation.run.hit_rate(1) == 0.5  # the headline rate is over every current question
    report = evaluation.report
    assert report.verdict is Verdict.PASS
    assert (report.hit_rate_delta(1), report.hit_rate_delta(3), report.flipped_to_miss) == (0.0, 0.0, ())
    assert report.set_changes.relabelled == report.set_changes.rescored == ("q1", "q2", "q3", "q4")
    assert report.set_changes.compared == 8  # the baseline rescored: the relabelled questions stay compared
    assert report.set_changes.sentence() == "Set changed since the baseline: 4 relabelled; compared on 8 questions."
    assert report.summary == (
        "No regression on the 8 compared questions: top-1 +0.0 pp, top-3 +0.0 pp. "
        "Baseline rescored under the current labels: 4 relabelled questions kept."
    )
    row = store.read_summary(evaluation.stored)
    assert (row["verdict"], row["compared_questions"], row["top1_delta"]) == ("pass", 8, 0.0)
    newest = run_history(store, HistoryKey("demo.set", "fixed"))[0]
    assert (newest.deltas["top1"], newest.status) == (0.0, "pass, baseline")  # not the headline's -50 pp


def test_a_real_drop_on_the_unchanged_questions_is_still_a_regression_whatever_else_changed(store):
    evaluate_and_record(ORIGINAL, answering(HITS, ORIGINAL), store, NO_WAIT)
    changed = edited(relabel=("q1",), remove=("q2",), add=("q9",), reword=("q3",))
    worse = {**HITS, "q5": ["x"], "q6": ["x"]}

    report = evaluate_and_record(changed, answering(worse, changed), store, NO_WAIT).report

    assert report.is_regression
    assert report.set_changes.sentence() == (
        "Set changed since the baseline: 1 added, 1 removed, 2 relabelled; compared on 6 questions."
    )
    assert report.summary.endswith(
        "Baseline rescored under the current labels: 1 relabelled question kept, 1 left out: "
        "q3 (asked with another text: its stored ranking answered another question)."
    )
    assert report.set_changes.rescored == ("q1",)
    assert report.hit_rate_delta(1) == pytest.approx(-2 / 6)
    assert report.flipped_to_miss == ("q5", "q6")
    assert {group.key: group.questions for group in report.by_form} == {"gap": 3, "match": 3}


def test_too_few_unchanged_questions_is_not_comparable_rather_than_a_verdict(store):
    evaluate_and_record(ORIGINAL, answering(HITS, ORIGINAL), store, NO_WAIT)
    reworked = edited(reword=tuple(f"q{i}" for i in range(1, 7)))
    strict = Tolerances(min_compared_questions=3)

    evaluation = evaluate_and_record(reworked, retriever_for({}, reworked), store, replace(NO_WAIT, tolerances=strict))

    report = evaluation.report
    assert report.verdict is Verdict.NOT_COMPARABLE and not report.is_regression
    assert report.summary.startswith("Not comparable: only 2 unchanged question(s) in common with baseline run")
    assert "(minimum 3)" in report.summary and "6 relabelled" in report.summary
    assert store.read_summary(evaluation.stored)["verdict"] == "not_comparable"


def test_a_minimum_of_compared_questions_below_one_is_refused():
    for value in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="min_compared_questions"):
            Tolerances(min_compared_questions=value)


def test_a_run_stored_before_fingerprints_is_compared_by_question_id_and_labels_and_says_so(store):
    first = evaluate_and_record(ORIGINAL, answering(HITS, ORIGINAL), store, NO_WAIT)
    _strip_fingerprints(store, first.stored)
    assert store.load(first.stored).set_fingerprint is None
    relabelled = edited(relabel=("q1",), reword=("q2",))

    report = evaluate_and_record(relabelled, answering(HITS, relabelled), store, NO_WAIT).report

    assert report.set_changes.relabelled == ("q1",)  # the reworded q2 cannot be told apart by its labels
    assert report.set_changes.by_labels is True
    assert "matched by question id and labels, text not checked" in report.set_changes.sentence()
    assert report.verdict is Verdict.PASS


def _strip_fingerprints(store: ResultStore, stored) -> None:
    """Rewrite a stored run as the store wrote it before fingerprints, verdicts and baselines existed."""
    for path, columns in (
        (store.questions_uri(stored), ("question_fingerprint",)),
        (store.summary_uri(stored), ("set_fingerprint", "verdict", "baseline_run_id")),
    ):
        table = pq.read_table(path)
        pq.write_table(table.drop_columns(list(columns)), path)


def test_history_key_of_an_edited_set_stays_the_same(store):
    """A set version is not a new history: the edited set's runs follow the original's."""
    evaluate_and_record(ORIGINAL, answering(HITS, ORIGINAL), store, NO_WAIT)
    changed = edited(add=("q9",))
    evaluate_and_record(changed, answering(HITS, changed), store, NO_WAIT)
    assert len(store.history(HistoryKey("demo.set", "fixed"))) == 2
