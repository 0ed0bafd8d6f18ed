"""Importing a BEIR folder as a golden set: judged queries only, forms tagged by the documented rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.beir import import_beir, read_qrels
from retrieval_pipeline.core.golden.forms import content_terms, tag_form, vocabulary_overlap

CORPUS = [
    {"_id": "d1", "title": "Wing aerodynamics", "text": "Lift distribution of a swept wing in a propeller slipstream."},
    {"_id": "d2", "title": "Heat transfer", "text": "Heat conduction in composite slabs at high temperature."},
    {"_id": "d3", "title": "Boundary layers", "text": "Transition of the laminar boundary layer on a flat plate."},
    {"_id": "d4", "title": "Unjudged", "text": "A document nobody asked about."},
]
QUERIES = [
    {"_id": "1", "text": "lift distribution of a swept wing in a slipstream"},  # match: shares its target's words
    {"_id": "2", "text": "how do things get warm through layered walls"},  # gap: everyday rewording
    {"_id": "3", "text": "laminar flow turning turbulent"},  # judged only with score 0: not a question
    {"_id": "4", "text": "a query nobody judged"},  # unjudged: not a question
    {"_id": "5", "text": "boundary layer transition on a flat plate or swept wing"},  # two targets
]
QRELS = "query-id\tcorpus-id\tscore\n1\td1\t2\n2\td2\t1\n3\td3\t0\n5\td3\t1\n5\td1\t1\n5\td2\t0\n5\td3\t2\n"


def write_beir(folder: Path, corpus=CORPUS, queries=QUERIES, qrels=QRELS, split="test") -> Path:
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    (folder / "qrels" / f"{split}.tsv").write_text(qrels, encoding="utf-8")
    return folder


def test_only_queries_judged_relevant_become_questions(tmp_path):
    imported = import_beir(write_beir(tmp_path / "tiny"), identifier="tiny.test")
    assert [q.id for q in imported.questions] == ["1", "2", "5"]
    assert imported.question("1").question == QUERIES[0]["text"]


def test_every_document_judged_above_zero_is_a_target_once_in_file_order(tmp_path):
    imported = import_beir(write_beir(tmp_path / "tiny"), identifier="tiny.test")
    assert imported.question("1").expected_document_ids == ("d1",)
    assert imported.question("5").expected_document_ids == ("d3", "d1")


def test_imported_forms_follow_the_vocabulary_overlap_rule(tmp_path):
    imported = import_beir(write_beir(tmp_path / "tiny"), identifier="tiny.test")
    assert imported.question("1").form.value == "match"
    assert imported.question("2").form.value == "gap"
    assert imported.question("5").form.value == "match"
    assert all(q.hard_class is None for q in imported.questions)


def test_the_imported_set_carries_identifier_name_and_split(tmp_path):
    folder = write_beir(tmp_path / "tiny", split="dev")
    imported = import_beir(folder, identifier="tiny.dev", split="dev")
    assert imported.identifier == "tiny.dev"
    assert imported.name == "tiny (dev)"
    assert "dev" in imported.description
    assert import_beir(folder, identifier="tiny.dev", split="dev", name="Tiny").name == "Tiny"


def test_numeric_ids_in_the_json_files_match_the_qrels(tmp_path):
    folder = write_beir(
        tmp_path / "numeric",
        corpus=[{"_id": 10, "title": "", "text": "wing lift"}],
        queries=[{"_id": 1, "text": "wing lift"}],
        qrels="1\t10\t1\n",
    )
    imported = import_beir(folder, identifier="numeric")
    assert imported.question("1").expected_document_ids == ("10",)


def test_a_qrels_file_without_a_header_is_read(tmp_path):
    folder = write_beir(tmp_path / "tiny", qrels="1\td1\t1\n")
    assert [q.id for q in import_beir(folder, identifier="tiny").questions] == ["1"]


def test_a_malformed_qrels_line_is_named_by_file_and_line(tmp_path):
    folder = write_beir(tmp_path / "tiny", qrels="query-id\tcorpus-id\tscore\n1\td1\t1\n2\td2\n")
    with pytest.raises(InvalidInputError) as caught:
        import_beir(folder, identifier="tiny")
    assert f"{folder / 'qrels' / 'test.tsv'}:3" in str(caught.value)


def test_a_non_numeric_score_is_named_by_file_and_line(tmp_path):
    folder = write_beir(tmp_path / "tiny", qrels="1\td1\thigh\n")
    with pytest.raises(InvalidInputError) as caught:
        read_qrels(folder / "qrels" / "test.tsv")
    assert f"{folder / 'qrels' / 'test.tsv'}:1" in str(caught.value) and "'high'" in str(caught.value)


def test_a_malformed_corpus_line_is_named_by_file_and_line(tmp_path):
    folder = write_beir(tmp_path / "tiny")
    corpus = folder / "corpus.jsonl"
    corpus.write_text(corpus.read_text(encoding="utf-8") + '{"_id": "d9", "text": \n', encoding="utf-8")
    with pytest.raises(InvalidInputError) as caught:
        import_beir(folder, identifier="tiny")
    assert f"{corpus}:5" in str(caught.value)


def test_a_judged_document_missing_from_the_corpus_is_reported(tmp_path):
    folder = write_beir(tmp_path / "tiny", qrels="1\td1\t1\n1\tghost\t1\n")
    with pytest.raises(InvalidInputError, match="'ghost'"):
        import_beir(folder, identifier="tiny")


def test_a_judged_query_without_text_is_named_by_file_and_line(tmp_path):
    folder = write_beir(tmp_path / "tiny", queries=[{"_id": "1", "title": "no text"}], qrels="1\td1\t1\n")
    with pytest.raises(InvalidInputError) as caught:
        import_beir(folder, identifier="tiny")
    assert f"{folder / 'queries.jsonl'}:1" in str(caught.value) and "text" in str(caught.value)


def test_a_missing_qrels_split_is_reported_with_its_path(tmp_path):
    folder = write_beir(tmp_path / "tiny")
    with pytest.raises(InvalidInputError) as caught:
        import_beir(folder, identifier="tiny", split="train")
    assert str(folder / "qrels" / "train.tsv") in str(caught.value)


def test_a_bad_identifier_is_refused_on_import(tmp_path):
    with pytest.raises(InvalidInputError, match="identifier"):
        import_beir(write_beir(tmp_path / "tiny"), identifier="Tiny Test")


# --- the form rule itself ---------------------------------------------------------------------


def test_content_terms_drop_stopwords_and_short_words_and_stem():
    assert content_terms("The wings of an aircraft are flying") == {"wing", "aircraft", "fli"}


def test_a_question_is_match_when_half_its_content_terms_occur_in_one_target():
    # content terms: wing, slipstream, heat, conduct -> 2 of 4 in the first target
    assert vocabulary_overlap("wing slipstream heat conduction", ["wing in a slipstream", "nothing"]) == 0.5
    assert tag_form("wing slipstream heat conduction", ["wing in a slipstream"]) == "match"
    assert tag_form("wing slipstream heat conduction", ["wing only", "slipstream only"]) == "gap"


def test_a_question_without_content_terms_or_targets_is_gap():
    assert tag_form("is it", ["is it"]) == "gap"
    assert tag_form("wing lift", []) == "gap"


# --- the real shared collections --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "split", "questions"),
    [("cranfield", "test", 225), ("cisi", "test", 76), ("scifact", "test", 300)],
)
def test_a_real_beir_collection_imports_its_judged_queries(shared_data, name, split, questions):
    folder = shared_data / name
    imported = import_beir(folder, identifier=f"{name}.{split}", split=split)
    assert len(imported.questions) == questions
    assert all(q.expected_document_ids for q in imported.questions)
    judged = read_qrels(folder / "qrels" / f"{split}.tsv")
    assert {q.id: q.expected_document_ids for q in imported.questions} == {k: tuple(v) for k, v in judged.items()}
    forms = imported.counts_by_form()
    assert forms.get("match", 0) > 0 and forms.get("gap", 0) > 0


def test_cranfield_labels_match_its_published_figures(shared_data):
    imported = import_beir(shared_data / "cranfield", identifier="cranfield.test")
    pairs = sum(len(q.expected_document_ids) for q in imported.questions)
    assert pairs == 1612
    assert sum(1 for q in imported.questions if len(q.expected_document_ids) > 1) == 219
