"""The label audit's judgements on hand-built sets and runs: which labels are wrong, which are suspect,
which questions are noise."""

from __future__ import annotations

from dataclasses import replace

from core_helpers import question, question_set, run_from_codes

from retrieval_pipeline.core.retrieval.corpus import answerable_documents
from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
from retrieval_pipeline.core.services.labels.label_audit import (
    empty_label_mix,
    flip_counts,
    labels_not_in_corpus,
    optimistic_rates,
    repeated_questions,
    suspect_labels,
    unstable_findings,
)


def test_a_label_no_corpus_holds_is_an_error_naming_the_question_and_document():
    labelled = question_set(question("q1", ("d1", "gone")), question("q2", ("d2",)))
    findings = labels_not_in_corpus(labelled, {"bm25": frozenset({"d1", "d2"})})
    assert [(f.kind, f.severity, f.question_id, f.as_dict()["document_id"]) for f in findings] == [
        ("label_not_in_corpus", "error", "q1", "gone")
    ]


def test_a_label_held_by_any_one_corpus_is_not_missing():
    labelled = question_set(question("q1", ("d1", "d9")))
    assert labels_not_in_corpus(labelled, {"a": frozenset({"d1"}), "b": frozenset({"d9"})}) == []


def test_a_document_label_matches_a_chunk_grained_corpus():
    labelled = question_set(question("q1", ("234",)))
    assert labels_not_in_corpus(labelled, {"chunks": answerable_documents(["234_0", "234_1", "7_0"])}) == []


def test_without_any_known_corpus_no_label_is_called_missing():
    assert labels_not_in_corpus(question_set(question("q1", ("x",))), {}) == []


def test_the_same_text_twice_is_a_duplicate_and_with_other_labels_a_conflict():
    labelled = question_set(
        question("q1", ("d1",), text="What is BM25?"),
        question("q2", ("d1",), text="what is  bm25"),
        question("q3", ("d7",), text="WHAT IS BM25!"),
        question("q4", ("d1",), text="something else"),
    )
    findings = [(f.kind, f.severity, f.question_id, f.as_dict()["duplicate_of"]) for f in repeated_questions(labelled)]
    assert findings == [("duplicate_question", "warning", "q2", "q1"), ("conflicting_labels", "error", "q3", "q1")]


def test_the_share_of_empty_labels_is_reported_not_an_error():
    labelled = question_set(question("q1", ()), question("q2", ("d1",)), question("q3", ("d2",)), question("q4", ("d3",)))
    [finding] = empty_label_mix(labelled)
    assert (finding.kind, finding.severity, finding.as_dict()["share"]) == ("empty_label_mix", "info", 0.25)
    assert empty_label_mix(question_set(question("q1", ("d1",)))) == []


def _run(retriever: str, rankings: dict[str, tuple[str, ...]], labels: dict[str, tuple[str, ...]], version="v1") -> RunResult:
    return RunResult(
        set_identifier="demo.set",
        retriever_identifier=retriever,
        index_version=version,
        questions=tuple(QuestionResult(qid, "match", None, labels[qid], ranking, 1.0) for qid, ranking in rankings.items()),
    )


def test_a_label_every_retriever_misses_while_two_agree_on_another_first_document_is_suspect():
    labels = {"q1": ("d1",), "q2": ("d2",)}
    labelled = question_set(question("q1", labels["q1"]), question("q2", labels["q2"]))
    runs = [
        _run("a", {"q1": ("x", "y", "z"), "q2": ("d2",)}, labels),
        _run("b", {"q1": ("x", "w", "v"), "q2": ("d2",)}, labels),
        _run("c", {"q1": ("u", "x", "t"), "q2": ("q",)}, labels),
    ]
    [suspect] = suspect_labels(labelled, runs)
    assert (suspect.question_id, suspect.candidate_document_id, suspect.retrievers) == ("q1", "x", ("a", "b"))
    rates = optimistic_rates(runs, [suspect])
    assert rates["a"] == {
        "top1_hit_rate": 0.5,
        "top3_hit_rate": 0.5,
        "optimistic_top1_hit_rate": 1.0,
        "optimistic_top3_hit_rate": 1.0,
    }
    assert rates["c"]["optimistic_top1_hit_rate"] == 0.0 and rates["c"]["optimistic_top3_hit_rate"] == 0.5


def test_no_suspect_when_one_retriever_finds_the_label_or_the_firsts_disagree():
    labels = {"q1": ("d1",)}
    labelled = question_set(question("q1", labels["q1"]))
    found_by_one = [_run("a", {"q1": ("x",)}, labels), _run("b", {"q1": ("x", "y", "d1")}, labels)]
    disagreeing = [_run("a", {"q1": ("x",)}, labels), _run("b", {"q1": ("y",)}, labels)]
    assert suspect_labels(labelled, found_by_one) == [] and suspect_labels(labelled, disagreeing) == []
    assert suspect_labels(labelled, [_run("a", {"q1": ("x",)}, labels)]) == []


def test_a_fusion_agreeing_with_its_own_members_is_not_independent_agreement():
    labels = {"q1": ("d1",)}
    labelled = question_set(question("q1", labels["q1"]))
    echoes = {"fused": ("a", "b"), "fused_again": ("fused", "c")}
    runs = {name: _run(name, {"q1": ("x",)}, labels) for name in ("a", "b", "c", "fused", "fused_again")}

    def suspect(*names: str) -> list:
        return suspect_labels(labelled, [runs[name] for name in names], echoes)

    assert suspect("a", "fused") == [] and suspect("fused", "fused_again") == [] and suspect("b", "fused_again") == []
    assert [s.retrievers for s in suspect("a", "fused", "c")] == [("a", "fused", "c")]  # a and c judge apart
    assert [s.retrievers for s in suspect("a", "b")] == [("a", "b")]


def test_runs_made_under_other_labels_do_not_speak_for_todays_label():
    labelled = question_set(question("q1", ("d1",)))
    old_labels = {"q1": ("old",)}
    runs = [_run("a", {"q1": ("x",)}, old_labels), _run("b", {"q1": ("x",)}, old_labels)]
    assert suspect_labels(labelled, runs) == []


def test_flips_are_counted_only_while_the_index_and_the_labels_stay_the_same():
    labelled = question_set(question("q1"), question("q2"), question("q3"))
    history = [run_from_codes(codes) for codes in ("1-1", "-31", "1-1", "-3-", "1-1")]
    assert flip_counts(labelled, history) == {"q1": 4, "q2": 4, "q3": 2}
    rebuilt = [replace(run, index_version=f"v{i}") for i, run in enumerate(history)]
    assert flip_counts(labelled, rebuilt) == {}
    relabelled = question_set(question("q1", ("other",)), question("q2"), question("q3"))
    assert "q1" not in flip_counts(relabelled, history)


def test_a_question_flipping_twice_is_unstable_with_its_flip_count_per_retriever():
    labelled = question_set(question("q1"), question("q2"))
    steady = [run_from_codes(codes) for codes in ("1-", "11", "1-")]
    once = [run_from_codes(codes) for codes in ("1-", "11", "11")]
    [finding] = unstable_findings(labelled, {"bm25": steady, "dense": once})
    assert (finding.kind, finding.question_id, finding.as_dict()["flips"]) == ("unstable_question", "q2", {"bm25": 2})


def _flaky_history(tmp_path, exclude: bool):
    """q1 hit, missed, hit again (two flips, same index) and then missed once more by the evaluated run."""
    from core_helpers import retriever_for

    from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
    from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
    from retrieval_pipeline.core.storage.store import ResultStore

    labelled = question_set(*(question(f"q{i}") for i in range(1, 6)))
    store = ResultStore(str(tmp_path / "store"))
    retriever = retriever_for({f"q{i}": ["t"] for i in range(1, 6)}, labelled)
    evaluation = None
    for q1_hit in (True, False, True, False):
        retriever.rankings[labelled.question("q1").question] = ["t"] if q1_hit else ["x"]
        evaluation = evaluate_and_record(labelled, retriever, store, EvaluationSettings(unstable_window=5 if exclude else None))
    return evaluation


def test_with_exclude_unstable_a_flaky_question_cannot_fail_the_gate_alone(tmp_path):
    evaluation = _flaky_history(tmp_path, exclude=True)

    assert not evaluation.report.is_regression
    assert evaluation.report.excluded_unstable == ("q1",)
    assert "Left out as unstable: 1 question(s) (q1)" in evaluation.report.summary
    assert evaluation.run.hit_rate(1) == 0.8  # never out of the reported rates


def test_without_exclude_unstable_the_same_flip_is_a_regression(tmp_path):
    evaluation = _flaky_history(tmp_path, exclude=False)

    assert evaluation.report.is_regression and evaluation.report.excluded_unstable == ()
