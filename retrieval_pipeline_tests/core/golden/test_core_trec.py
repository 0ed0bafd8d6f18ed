"""Importing TREC qrels and topics as a golden set: judged topics only, forms tagged like BEIR's."""

from __future__ import annotations

import json
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.beir import import_beir, read_jsonl, read_qrels
from retrieval_pipeline.core.golden.trec import import_trec, read_trec_qrels, read_trec_topics

CORPUS = [
    {"_id": "d1", "title": "Wing aerodynamics", "text": "Lift distribution of a swept wing in a propeller slipstream."},
    {"_id": "d2", "title": "Heat transfer", "text": "Heat conduction in composite slabs at high temperature."},
    {"_id": "d3", "title": "Boundary layers", "text": "Transition of the laminar boundary layer on a flat plate."},
]
SGML_TOPICS = """
<top>
<num> Number: 301
<title> lift distribution of a swept wing in a slipstream

<desc> Description:
How is lift spread along a swept wing
sitting in a propeller slipstream?

<narr> Narrative:
Relevant documents measure or compute it.
</top>

<top>
<num> Number: 302
<title> Topic: how do things get warm through layered walls
<desc> Description: Heat conduction in composite slabs.
</top>

<top>
<num> Number: 303
<title> an unjudged topic
<desc> Description: Nobody judged it.
</top>

<top>
<num> Number: 304 </num>
<title> boundary layer transition on a flat plate or swept wing </title>
<desc> Description: Either of two documents answers. </desc>
</top>
"""
TSV_TOPICS = (
    "301\tlift distribution of a swept wing in a slipstream\n"
    "302\thow do things get warm through layered walls\n"
    "\n"
    "303\tan unjudged topic\n"
    "304\tboundary layer transition on a flat plate or swept wing\n"
)
XML_TOPICS = """<?xml version="1.0" encoding="UTF-8"?>
<webtrack2009>
<topic number="301" type="faceted">
  <query>lift distribution of a swept wing in a slipstream</query>
  <description>How is lift spread along a swept wing
    sitting in a propeller slipstream?</description>
  <subtopic number="1" type="inf">A subtopic is not a question of its own.</subtopic>
</topic>
<topic number="302"><query>how do things get warm through layered walls</query>
  <description>Heat conduction in composite slabs.</description></topic>
<topic number="303"><query>an unjudged topic</query><description>Nobody judged it.</description></topic>
<topic number="304">
  <query>boundary layer transition on a flat plate or swept wing</query>
  <description>Either of two documents answers.</description>
</topic>
</webtrack2009>
"""
QRELS = (
    "301 0 d1 2\n"
    "302 0 d2 1\n"
    "302 0 d3 0\n"
    "303 0 d1 0\n"  # judged non-relevant only: not a question
    "304 0 d3 1\n"
    "304\t0\td1\t1\n"  # tabs are whitespace too
    "304 0 d2 -1\n"
    "304 0 d3 2\n"  # judged twice: one target
)


def write(folder: Path, *, topics: str = SGML_TOPICS, qrels: str = QRELS, corpus=CORPUS) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"qrels": folder / "qrels.txt", "topics": folder / "topics.txt", "corpus": folder / "corpus.jsonl"}
    paths["qrels"].write_text(qrels, encoding="utf-8")
    paths["topics"].write_text(topics, encoding="utf-8")
    paths["corpus"].write_text("".join(json.dumps(d) + "\n" for d in corpus), encoding="utf-8")
    return paths


def test_qrels_keep_relevance_above_zero_in_order_of_first_appearance(tmp_path):
    qrels = read_trec_qrels(write(tmp_path)["qrels"])
    assert qrels == {"301": ["d1"], "302": ["d2"], "304": ["d3", "d1"]}
    assert list(qrels) == ["301", "302", "304"]


def test_sgml_topics_give_titles_or_descriptions_without_their_labels(tmp_path):
    topics = write(tmp_path)["topics"]
    titles = read_trec_topics(topics)
    assert titles == {
        "301": "lift distribution of a swept wing in a slipstream",
        "302": "how do things get warm through layered walls",
        "303": "an unjudged topic",
        "304": "boundary layer transition on a flat plate or swept wing",
    }
    descriptions = read_trec_topics(topics, field="description")
    assert descriptions["301"] == "How is lift spread along a swept wing sitting in a propeller slipstream?"
    assert descriptions["304"] == "Either of two documents answers."


def test_tab_separated_topics_are_read_and_field_does_not_apply(tmp_path):
    topics = write(tmp_path, topics=TSV_TOPICS)["topics"]
    assert read_trec_topics(topics) == read_trec_topics(write(tmp_path / "sgml")["topics"])
    assert read_trec_topics(topics, field="description") == read_trec_topics(topics)


def test_xml_topics_give_queries_or_descriptions_like_the_sgml_ones(tmp_path):
    xml = write(tmp_path, topics=XML_TOPICS)["topics"]
    sgml = write(tmp_path / "sgml")["topics"]

    assert read_trec_topics(xml) == read_trec_topics(sgml)
    assert read_trec_topics(xml, field="description") == read_trec_topics(sgml, field="description")


@pytest.mark.parametrize(
    ("topics", "where", "message"),
    [
        ('<topics>\n<topic number="301"><query>swept wing</query>\n</topics>\n', ":3", "not well-formed XML"),
        ("<topics><topic><query>swept wing</query></topic></topics>", " (topic #1)", 'without a number="..."'),
        (
            '<topics><topic number="301"><query>a</query></topic><topic number="302"/></topics>',
            " (topic #2)",
            "'302' has no <query>",
        ),
    ],
)
def test_a_bad_xml_topic_is_named_by_file_and_position(tmp_path, topics, where, message):
    path = write(tmp_path, topics=topics)["topics"]

    with pytest.raises(InvalidInputError) as caught:
        read_trec_topics(path)

    assert caught.value.source == f"{path}{where}" and message in str(caught.value)


@pytest.mark.parametrize("topics", [SGML_TOPICS, XML_TOPICS, TSV_TOPICS], ids=["sgml", "xml", "tsv"])
def test_only_judged_topics_become_questions_with_forms_by_the_documented_rule(tmp_path, topics):
    paths = write(tmp_path, topics=topics)
    imported = import_trec(paths["qrels"], paths["topics"], identifier="tiny.trec", corpus=paths["corpus"])
    assert [q.id for q in imported.questions] == ["301", "302", "304"]
    assert [q.expected_document_ids for q in imported.questions] == [("d1",), ("d2",), ("d3", "d1")]
    assert [q.form.value for q in imported.questions] == ["match", "gap", "match"]
    assert imported.identifier == "tiny.trec" and imported.name == "topics.txt"


def test_the_description_field_and_a_name_can_be_chosen(tmp_path):
    paths = write(tmp_path)
    imported = import_trec(
        paths["qrels"], paths["topics"], identifier="tiny", corpus=paths["corpus"], field="description", name="Tiny"
    )
    assert imported.question("302").question == "Heat conduction in composite slabs."
    assert imported.name == "Tiny" and "description" in imported.description


def test_questions_follow_the_topics_file_order_and_zero_padded_numbers_match(tmp_path):
    topics = (
        "<top>\n<num> Number: 052\n<title> heat conduction\n</top>\n<top>\n<num> Number: 051\n<title> swept wing lift\n</top>\n"
    )
    paths = write(tmp_path, topics=topics, qrels="51 0 d1 1\n52 0 d2 1\n")
    imported = import_trec(paths["qrels"], paths["topics"], identifier="tiny", corpus=paths["corpus"])
    assert [(q.id, q.question) for q in imported.questions] == [("52", "heat conduction"), ("51", "swept wing lift")]


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        ("301 0 d1 1\n302 0 d2\n", "expected query-id, iteration, document-id and relevance"),
        ("301 0 d1 1\n\n302 0 d2 yes\n", "'yes' is not a number"),
    ],
)
def test_a_malformed_qrels_line_is_named_by_file_and_line(tmp_path, qrels, message):
    paths = write(tmp_path, qrels=qrels)
    with pytest.raises(InvalidInputError) as caught:
        import_trec(paths["qrels"], paths["topics"], identifier="tiny", corpus=paths["corpus"])
    line = qrels.count("\n")
    assert f"{paths['qrels']}:{line}" in str(caught.value) and message in str(caught.value)


def test_a_judged_query_without_a_topic_is_a_clear_error(tmp_path):
    paths = write(tmp_path, qrels=QRELS + "999 0 d1 1\n")
    with pytest.raises(InvalidInputError) as caught:
        import_trec(paths["qrels"], paths["topics"], identifier="tiny", corpus=paths["corpus"])
    assert "'999' is judged but has no topic" in str(caught.value) and str(paths["topics"]) in str(caught.value)


@pytest.mark.parametrize(
    ("topics", "line", "message"),
    [
        ("301\tswept wing\n302\t  \n", 2, "expected query-id<TAB>text"),
        ("301\tswept wing\n302 heat conduction\n", 2, "expected query-id<TAB>text"),
        (
            "<top>\n<num> Number: 301\n<title> swept wing\n</top>\n<top>\n<num> Number: 302\n<title>\n</top>\n",
            5,
            "no <title> text",
        ),
        ("<top>\n<title> swept wing\n</top>\n", 1, "without a <num>"),
        ("301\tswept wing\n301\theat\n", 2, "appears twice"),
    ],
)
def test_a_topic_without_text_is_named_by_file_and_line(tmp_path, topics, line, message):
    paths = write(tmp_path, topics=topics, qrels="301 0 d1 1\n302 0 d2 1\n")
    with pytest.raises(InvalidInputError) as caught:
        import_trec(paths["qrels"], paths["topics"], identifier="tiny", corpus=paths["corpus"])
    assert f"{paths['topics']}:{line}" in str(caught.value) and message in str(caught.value)


def test_forms_need_a_corpus(tmp_path):
    paths = write(tmp_path)
    with pytest.raises(InvalidInputError, match="corpus .* is needed to tag"):
        import_trec(paths["qrels"], paths["topics"], identifier="tiny")


def test_a_judged_document_missing_from_the_corpus_is_reported(tmp_path):
    paths = write(tmp_path, qrels="301 0 ghost 1\n")
    with pytest.raises(InvalidInputError, match="'ghost'"):
        import_trec(paths["qrels"], paths["topics"], identifier="tiny", corpus=paths["corpus"])


def test_an_unknown_field_and_a_missing_file_are_refused(tmp_path):
    paths = write(tmp_path)
    with pytest.raises(InvalidInputError, match="use one of title, description"):
        read_trec_topics(paths["topics"], field="narrative")
    with pytest.raises(InvalidInputError, match="cannot read") as caught:
        read_trec_qrels(tmp_path / "nowhere.txt")
    assert str(tmp_path / "nowhere.txt") in str(caught.value)


# --- the real shared collection ---------------------------------------------------------------


@pytest.mark.parametrize("topic_format", ["sgml", "xml", "tsv"])
def test_cranfield_as_trec_files_imports_as_the_same_set_as_its_beir_folder(shared_data, tmp_path, topic_format):
    folder = shared_data / "cranfield"
    queries = [(str(record["_id"]), record["text"]) for _, record in read_jsonl(folder / "queries.jsonl")]
    if topic_format == "sgml":
        topics = "".join(
            f"<top>\n<num> Number: {qid}\n<title> {text}\n\n<desc> Description:\n{text}\n</top>\n\n" for qid, text in queries
        )
    elif topic_format == "xml":
        topics = (
            "<topics>\n"
            + "".join(f'<topic number="{qid}"><query>{escape(text)}</query></topic>\n' for qid, text in queries)
            + "</topics>\n"
        )
    else:
        topics = "".join(f"{qid}\t{text}\n" for qid, text in queries)
    qrels = "".join(
        f"{qid} 0 {document_id} 1\n"
        for qid, targets in read_qrels(folder / "qrels" / "test.tsv").items()
        for document_id in targets
    )
    (tmp_path / "topics").write_text(topics, encoding="utf-8")
    (tmp_path / "qrels").write_text(qrels, encoding="utf-8")

    trec = import_trec(tmp_path / "qrels", tmp_path / "topics", identifier="cranfield.trec", corpus=folder / "corpus.jsonl")
    beir = import_beir(folder, identifier="cranfield.test")

    def fields(question_set):
        return [(q.id, q.question, q.expected_document_ids, q.form) for q in question_set.questions]

    assert len(trec.questions) == 225
    assert fields(trec) == fields(beir)
