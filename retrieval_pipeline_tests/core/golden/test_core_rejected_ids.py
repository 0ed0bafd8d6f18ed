"""Negative judgements: documents a person judged not to answer a question, kept beside its expected ids."""

from __future__ import annotations

import hashlib
import json

import pytest
from core_helpers import RankingRetriever, question_set
from test_core_beir import write_beir
from test_core_trec import write

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.beir import import_beir, imported_beir
from retrieval_pipeline.core.golden.fingerprints import question_fingerprint
from retrieval_pipeline.core.golden.question_file_writer import dump_question_set, write_question_set_file
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.golden.questions import GoldenQuestion
from retrieval_pipeline.core.golden.trec import import_trec, imported_trec
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy, run_question_set
from retrieval_pipeline.core.storage.store import ResultStore


def judged(question_id: str = "q1", expected=("d1",), rejected=("d2", "d3")) -> GoldenQuestion:
    return GoldenQuestion(
        id=question_id,
        question=f"question {question_id}?",
        form="match",
        expected_document_ids=expected,
        rejected_document_ids=rejected,
    )


def test_a_question_keeps_its_rejected_ids_and_counts_both_lists_as_judged():
    question = judged()
    assert question.rejected_document_ids == ("d2", "d3")
    assert question.judged_document_ids == ("d1", "d2", "d3")
    assert GoldenQuestion(id="q", question="q?", form="gap", expected_document_ids=()).rejected_document_ids == ()


@pytest.mark.parametrize(
    ("rejected", "problem"),
    [(("d2", "d2"), "duplicate rejected document id 'd2'"), (("d1",), "'d1' is also an expected document id"), (("",), "")],
    ids=["duplicate", "also-expected", "empty-id"],
)
def test_a_bad_rejected_list_is_refused_naming_the_file_question_and_field(tmp_path, rejected, problem):
    path = tmp_path / "set.json"
    question = {"id": "q7", "question": "q?", "form": "match", "expected_document_ids": ["d1"], "rejected_document_ids": rejected}
    path.write_text(json.dumps({"identifier": "demo.set", "name": "Demo", "questions": [question]}), encoding="utf-8")
    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(path)
    message = str(caught.value)
    assert str(path) in message and "'q7'" in message and "rejected_document_ids" in message and problem in message


def test_an_empty_label_question_may_list_rejected_documents():
    question = judged(expected=(), rejected=("d9",))
    assert question.expected_document_ids == () and question.judged_document_ids == ("d9",)


def test_the_fingerprint_of_a_question_without_rejected_ids_is_the_one_stored_runs_carry():
    before = {"question": "q?", "expected_document_ids": ["a", "b"], "form": "match", "hard_class": None}
    canonical = json.dumps(before, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert question_fingerprint("q?", ["b", "a"], "match", None) == hashlib.sha256(canonical.encode()).hexdigest()[:16]
    assert question_fingerprint("q?", ["b", "a"], "match", None, ()) == question_fingerprint("q?", ["a", "b"], "match", None)


@pytest.mark.parametrize(
    ("text", "hard_class", "rejected"),
    [("q?", None, ()), ('é "quoted" \\ back\nline\t\x01 \u2028 😀', "near-duplicate", ("z", "ü", 'a"b'))],
)
def test_the_fingerprint_digests_the_canonical_json_of_the_labels(text, hard_class, rejected):
    labels = {"question": text, "expected_document_ids": ["b", "ä", "a"], "form": "gap", "hard_class": hard_class}
    if rejected:
        labels["rejected_document_ids"] = list(rejected)
    labels = {key: sorted(value) if isinstance(value, list) else value for key, value in labels.items()}
    canonical = json.dumps(labels, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    expected = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    assert question_fingerprint(text, ["b", "ä", "a"], "gap", hard_class, rejected) == expected


def test_the_fingerprint_covers_rejected_ids_as_a_set():
    plain = question_fingerprint("q?", ["a"], "match", None)
    rejected = question_fingerprint("q?", ["a"], "match", None, ["x", "y"])
    assert rejected != plain
    assert question_fingerprint("q?", ["a"], "match", None, ["y", "x"]) == rejected
    assert question_fingerprint("q?", ["a"], "match", None, ["x"]) != rejected


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
def test_set_files_keep_rejected_ids_and_leave_the_key_out_when_there_are_none(tmp_path, suffix):
    golden = question_set(judged("q1"), judged("q2", rejected=()))
    path = write_question_set_file(golden, tmp_path / f"set{suffix}")
    assert load_question_set_file(path) == golden
    assert dump_question_set(golden, suffix).count("rejected_document_ids") == 1


def test_beir_qrels_with_score_zero_become_rejected_ids(tmp_path):
    imported = import_beir(write_beir(tmp_path / "tiny"), identifier="tiny.test")
    rejected = {q.id: q.rejected_document_ids for q in imported.questions}
    assert rejected == {"1": (), "2": (), "5": ("d2",)}  # query 3, judged only 0, is still no question


def test_trec_qrels_with_relevance_zero_or_below_become_rejected_ids(tmp_path):
    paths = write(tmp_path)
    imported = import_trec(paths["qrels"], paths["topics"], identifier="tiny.trec", corpus=paths["corpus"])
    assert {q.id: q.rejected_document_ids for q in imported.questions} == {"301": (), "302": ("d3",), "304": ("d2",)}


def test_beir_and_trec_imports_name_the_queries_judged_only_not_relevant(tmp_path):
    paths = write(tmp_path / "trec")
    beir = imported_beir(write_beir(tmp_path / "tiny"), identifier="tiny.test")
    trec = imported_trec(paths["qrels"], paths["topics"], identifier="tiny.trec", corpus=paths["corpus"])
    assert (beir.left_out, trec.left_out) == (("3",), ("303",))


def test_a_minimum_relevance_makes_lower_grades_rejected_ids_and_names_the_queries_it_empties(tmp_path):
    paths = write(tmp_path / "trec")
    beir = imported_beir(write_beir(tmp_path / "tiny"), identifier="tiny.test", min_relevance=2)
    trec = imported_trec(paths["qrels"], paths["topics"], identifier="tiny.trec", corpus=paths["corpus"], min_relevance=2)
    labels = {q.id: (q.expected_document_ids, q.rejected_document_ids) for q in beir.question_set.questions}
    assert labels == {"1": (("d1",), ()), "5": (("d3",), ("d1", "d2"))}
    assert beir.left_out == ("2", "3")  # "2" was judged 1 only: not relevant once the minimum is 2
    assert [q.id for q in trec.question_set.questions] == ["301", "304"] and trec.left_out == ("302", "303")


def test_a_stored_run_keeps_each_question_s_rejected_ids_and_its_fingerprint(tmp_path):
    golden = question_set(judged("q1"), judged("q2", rejected=()))
    run = run_question_set(
        golden, RankingRetriever({"question q1?": ["d2", "d1"], "question q2?": ["d1"]}), retry=RetryPolicy(attempts=1)
    )
    store = ResultStore(str(tmp_path))
    loaded = store.load(store.save(run))
    assert [q.rejected_document_ids for q in loaded.questions] == [("d2", "d3"), ()]
    assert loaded.set_fingerprint == run.set_fingerprint and loaded.questions == run.questions
