"""Importing conversational collections (TREC CAsT and iKAT topics with qrels, QReCC and TopiOCQA records)
as golden conversations, from small files written here in each published format."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.conversation_imports.cast import imported_cast
from retrieval_pipeline.core.golden.conversation_imports.records import imported_conversation_records
from retrieval_pipeline.core.golden.question_file_writer import write_question_set_file
from retrieval_pipeline.core.golden.question_files import load_question_set_file

COLLECTIONS = Path(__file__).parent / "collections"


def turns(imported):
    return [
        (q.id, q.question, q.turn.rewrite, q.expected_document_ids, q.rejected_document_ids)
        for q in imported.question_set.questions
    ]


def test_cast_topics_become_conversations_scored_on_their_qrels():
    imported = imported_cast(
        COLLECTIONS / "cast_topics.json",
        COLLECTIONS / "cast_qrels.txt",
        identifier="cast.tiny",
        corpus=COLLECTIONS / "corpus.jsonl",
    )

    assert turns(imported) == [
        (
            "101/1",
            "How do I fix a flat tyre on my bicycle?",
            "How do I fix a flat tyre on my bicycle?",
            ("bike-01", "bike-04"),
            ("bike-05",),
        ),
        (
            "101/2",
            "What should I bring along for that on a ride?",
            "What tools should I carry to repair a flat bicycle tyre?",
            ("bike-02",),
            ("bike-01",),
        ),
        (
            "101/3",
            "And how often should I check the pressure?",
            "How often should I check the pressure of my bicycle tyres?",
            ("bike-03",),
            ("bike-02",),
        ),
        ("102/1", "What is a sourdough starter?", "What is a sourdough starter?", ("bread-01", "bread-04"), ()),
        ("102/2", "Mine smells sour. Why?", "Why does my sourdough starter smell sour?", ("bread-02",), ("bread-01",)),
    ]
    question_set = imported.question_set
    assert question_set.question("101/1").turn.reply.startswith("Take the wheel off")  # CAsT 2021's canonical passage
    assert [q.id for q in question_set.history(question_set.question("101/3"))] == ["101/1", "101/2"]
    # 102/3 was judged only not relevant, so 102/4 would be asked with a hole in its history; topic 103 is unjudged
    assert imported.left_out == ("102/3", "102/4")
    assert list(question_set.conversations) == ["101", "102"]


def test_min_relevance_counts_only_the_higher_grades_and_cuts_the_conversation_there():
    imported = imported_cast(
        COLLECTIONS / "cast_topics.json", COLLECTIONS / "cast_qrels.txt", identifier="cast.tiny", min_relevance=3
    )

    assert [(q.id, q.expected_document_ids) for q in imported.question_set.questions] == [
        ("101/1", ("bike-01",)),
        ("101/2", ("bike-02",)),
        ("102/1", ("bread-01",)),
        ("102/2", ("bread-02",)),
    ]
    assert imported.left_out == ("101/3", "102/3", "102/4")


def test_cast_2022_paths_become_conversations_of_their_own_judged_under_the_tree_turn_ids():
    imported = imported_cast(COLLECTIONS / "cast2022_topics.json", COLLECTIONS / "cast2022_qrels.txt", identifier="cast.y4")

    assert [(q.id, q.turn.number, q.expected_document_ids) for q in imported.question_set.questions] == [
        ("140.1/1", 1, ("bike-05",)),
        ("140.1/2", 2, ("bike-03",)),
        ("140.2/1", 1, ("bike-05",)),
        ("140.2/2", 2, ("bike-04", "bike-01")),
    ]
    assert imported.question_set.question("140.2/2").turn.reply == "Their sealant closes small punctures by itself."


def test_ikat_topics_read_the_resolved_utterance_as_the_rewrite_and_the_response_as_the_reply():
    imported = imported_cast(COLLECTIONS / "ikat_topics.json", COLLECTIONS / "ikat_qrels.txt", identifier="ikat.tiny")

    second = imported.question_set.question("7-1/2")
    assert (second.question, second.turn.rewrite, second.expected_document_ids) == (
        "How will they survive my winters?",
        "How will a honeybee colony survive the cold winters where I live?",
        ("bees-02", "bees-04"),
    )
    assert second.turn.reply.startswith("They cluster around the queen")
    assert [q.id for q in imported.question_set.questions] == ["7-1/1", "7-1/2", "7-1/3", "7-2/1", "7-2/2"]
    assert imported.left_out == ()


def test_qrecc_records_expect_their_answer_url_and_stop_at_a_turn_without_one():
    imported = imported_conversation_records(COLLECTIONS / "qrecc.jsonl", style="QReCC", identifier="qrecc.tiny")

    assert turns(imported) == [
        ("1/1", "What is matcha?", "What is matcha?", ("https://example.org/tea/matcha",), ()),
        (
            "1/2",
            "Does it have more caffeine than coffee?",
            "Does matcha have more caffeine than coffee?",
            ("https://example.org/tea/caffeine",),
            (),
        ),
        (
            "2/1",
            "Why do bumblebee colonies die in autumn?",
            "Why do bumblebee colonies die in autumn?",
            ("https://example.org/bees/bumblebees",),
            (),
        ),
    ]
    assert imported.question_set.question("1/2").turn.reply == "No: tea holds about half the caffeine of coffee."
    assert imported.left_out == ("2/2", "2/3")


def test_topiocqa_records_expect_their_gold_passage_and_tag_forms_against_its_text():
    imported = imported_conversation_records(COLLECTIONS / "topiocqa.jsonl", style="TopiOCQA", identifier="topiocqa.tiny")

    assert [(q.id, q.expected_document_ids, q.form.value, q.turn.rewrite) for q in imported.question_set.questions] == [
        ("11/1", ("wiki:4",), "match", None),
        ("11/2", ("wiki:4",), "match", None),
        ("11/3", ("wiki:6",), "match", None),
    ]


def test_records_published_as_one_json_list_import_as_their_json_lines_do(tmp_path):
    records = [json.loads(line) for line in (COLLECTIONS / "qrecc.jsonl").read_text().splitlines()]
    listed = tmp_path / "qrecc_test.json"
    listed.write_text(json.dumps(records, indent=2))

    assert turns(imported_conversation_records(listed, style="QReCC", identifier="qrecc.tiny")) == turns(
        imported_conversation_records(COLLECTIONS / "qrecc.jsonl", style="QReCC", identifier="qrecc.tiny")
    )


def test_qrels_replace_the_records_own_gold(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("11_1 0 wiki:9 1\n11_2 0 wiki:9 2\n11_3 0 wiki:6 0\n")

    imported = imported_conversation_records(
        COLLECTIONS / "topiocqa.jsonl", style="TopiOCQA", identifier="topiocqa.tiny", qrels=qrels
    )

    assert [(q.id, q.expected_document_ids) for q in imported.question_set.questions] == [
        ("11/1", ("wiki:9",)),
        ("11/2", ("wiki:9",)),
    ]
    assert imported.left_out == ("11/3",)


@pytest.mark.parametrize("suffix", [".yaml", ".jsonl"])
def test_an_imported_set_is_written_as_conversations_and_loads_back_the_same(tmp_path, suffix):
    imported = imported_cast(COLLECTIONS / "ikat_topics.json", COLLECTIONS / "ikat_qrels.txt", identifier="ikat.tiny")

    written = write_question_set_file(imported.question_set, tmp_path / f"ikat{suffix}")

    assert load_question_set_file(written) == imported.question_set
    if suffix == ".yaml":
        assert "conversations:" in written.read_text()


def damaged_line(tmp_path: Path, name: str, line: int, change) -> Path:
    """A copy of a JSON-lines fixture with one record changed (`change` edits it in place)."""
    lines = (COLLECTIONS / name).read_text().splitlines()
    record = json.loads(lines[line - 1])
    change(record)
    lines[line - 1] = json.dumps(record)
    damaged = tmp_path / name
    damaged.write_text("\n".join(lines) + "\n")
    return damaged


@pytest.mark.parametrize(
    ("name", "line", "change", "field", "problem"),
    [
        ("qrecc.jsonl", 2, lambda r: r.pop("Question"), "Question", "missing or blank"),
        ("qrecc.jsonl", 2, lambda r: r.update(Question=["a", "list"]), "Question", "must be text, not list"),
        ("qrecc.jsonl", 2, lambda r: r.update(Turn_no=0), "Turn_no", "0 is not a turn number"),
        ("qrecc.jsonl", 2, lambda r: r.update(Turn_no=3), "Turn_no", "conversation '1': turn 3 comes after turn 1"),
        ("qrecc.jsonl", 2, lambda r: r.update(Turn_no=1), "Turn_no", "conversation '1': duplicate turn 1"),
        ("qrecc.jsonl", 1, lambda r: r.update(Conversation_no="a/b"), "Conversation_no", "holds '/'"),
        ("qrecc.jsonl", 3, lambda r: r.pop("Conversation_no"), "Conversation_no", "missing conversation id"),
        ("topiocqa.jsonl", 3, lambda r: r.update(Gold_passage="wiki:6"), "Gold_passage", "must be an object"),
        ("topiocqa.jsonl", 2, lambda r: r["Gold_passage"].pop("id"), "Gold_passage.id", "missing passage id"),
    ],
)
def test_a_damaged_record_is_refused_in_one_line_naming_the_file_line_and_field(tmp_path, name, line, change, field, problem):
    damaged = damaged_line(tmp_path, name, line, change)
    style = "QReCC" if name.startswith("qrecc") else "TopiOCQA"

    with pytest.raises(InvalidInputError) as refused:
        imported_conversation_records(damaged, style=style, identifier="broken.set")

    message = str(refused.value)
    assert message.startswith(f"{damaged}:{line}: field '{field}': "), message
    assert problem in message and "\n" not in message


def test_a_line_that_is_not_json_is_refused_naming_its_line(tmp_path):
    damaged = tmp_path / "qrecc.jsonl"
    lines = (COLLECTIONS / "qrecc.jsonl").read_text().splitlines()
    damaged.write_text("\n".join([*lines[:2], '{"Question": "cut short', *lines[3:]]) + "\n")

    with pytest.raises(InvalidInputError, match=rf"^{damaged}:3:\d+: invalid JSON"):
        imported_conversation_records(damaged, style="QReCC", identifier="broken.set")


def test_a_listed_record_that_is_not_an_object_is_refused_naming_its_position(tmp_path):
    listed = tmp_path / "topiocqa_dev.json"
    listed.write_text(json.dumps([json.loads((COLLECTIONS / "topiocqa.jsonl").read_text().splitlines()[0]), "oops"]))

    with pytest.raises(InvalidInputError, match=r"\(record #2\): expected a JSON object, not str$"):
        imported_conversation_records(listed, style="TopiOCQA", identifier="broken.set")


def damaged_topics(tmp_path: Path, name: str, change) -> Path:
    topics = json.loads((COLLECTIONS / name).read_text())
    change(topics)
    damaged = tmp_path / name
    damaged.write_text(json.dumps(topics, indent=2))
    return damaged


@pytest.mark.parametrize(
    ("name", "change", "located", "problem"),
    [
        (
            "cast_topics.json",
            lambda t: t[0]["turn"][1].pop("raw_utterance"),
            "(topic '101' turn 2): field 'raw_utterance or utterance'",
            "missing or blank",
        ),
        (
            "cast_topics.json",
            lambda t: t[0]["turn"][2].update(number=5),
            "(topic '101' turn 5): field 'number'",
            "turn 5 comes after turn 2",
        ),
        (
            "cast_topics.json",
            lambda t: t[1]["turn"][0].update(manual_rewritten_utterance=7),
            "(topic '102' turn 1): field 'manual_rewritten_utterance'",
            "must be text, not int",
        ),
        ("cast_topics.json", lambda t: t[2].pop("turn"), "(topic #3): field 'turn'", "topic '103' has no turns"),
        ("cast_topics.json", lambda t: t[2].update(number=101), "(topic #3): field 'number'", "topic '101' appears twice"),
        ("ikat_topics.json", lambda t: t[1].pop("number"), "(topic #2): field 'number'", "missing conversation id"),
        (
            "ikat_topics.json",
            lambda t: t[0]["turns"][1].update(turn_id="two"),
            "(topic '7-1' turn 'two'): field 'turn_id'",
            "'two' is not a turn number",
        ),
        (
            "cast2022_topics.json",
            lambda t: t[0]["turn"].insert(1, {"number": "1-2", "participant": "System", "response": "Oil it."}),
            "(topic '140' turn '1-2')",
            "a System turn: import the flattened topics file",
        ),
    ],
)
def test_a_damaged_topic_is_refused_in_one_line_naming_the_file_topic_turn_and_field(tmp_path, name, change, located, problem):
    damaged = damaged_topics(tmp_path, name, change)
    qrels = COLLECTIONS / name.replace("topics.json", "qrels.txt")

    with pytest.raises(InvalidInputError) as refused:
        imported_cast(damaged, qrels, identifier="broken.set")

    message = str(refused.value)
    assert message.startswith(f"{damaged} {located}"), message
    assert problem in message and "\n" not in message


def test_qrels_naming_no_turn_are_refused_naming_the_qrels_and_the_query(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text((COLLECTIONS / "cast_qrels.txt").read_text() + "104_1 Q0 tea-01 2\n")

    with pytest.raises(InvalidInputError, match=rf"^{qrels}: query '104_1' is judged but names no turn"):
        imported_cast(COLLECTIONS / "cast_topics.json", qrels, identifier="broken.set")


def test_a_damaged_qrels_line_is_refused_naming_its_line(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("101_1 Q0 bike-01 4\n101_2 Q0 bike-02\n")

    with pytest.raises(InvalidInputError, match=rf"^{qrels}:2: expected query-id, iteration, document-id and relevance"):
        imported_cast(COLLECTIONS / "cast_topics.json", qrels, identifier="broken.set")


def test_turns_without_a_text_to_tag_their_form_against_need_the_corpus(tmp_path):
    """CAsT 2019 and 2020 give no canonical passage: the judged documents' texts are the only ground."""
    topics = damaged_topics(tmp_path, "cast_topics.json", lambda t: [turn.pop("passage", None) for turn in t[0]["turn"]])

    with pytest.raises(InvalidInputError, match=r"\(topic '101' turn 1\): no text of what answers this turn .* --corpus"):
        imported_cast(topics, COLLECTIONS / "cast_qrels.txt", identifier="broken.set")
    with_corpus = imported_cast(
        topics, COLLECTIONS / "cast_qrels.txt", identifier="fine.set", corpus=COLLECTIONS / "corpus.jsonl"
    )
    assert with_corpus.question_set.question("101/1").turn.reply is None


def test_a_judged_document_missing_from_the_corpus_is_refused(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    shutil.copy(COLLECTIONS / "corpus.jsonl", corpus)
    corpus.write_text("".join(line + "\n" for line in corpus.read_text().splitlines() if "bees-03" not in line))

    with pytest.raises(InvalidInputError, match=r"judged relevant to 'bees-03', which is not in"):
        imported_cast(COLLECTIONS / "ikat_topics.json", COLLECTIONS / "ikat_qrels.txt", identifier="x.y", corpus=corpus)


def test_rewrites_published_beside_the_topics_replace_theirs(tmp_path):
    """CAsT 2019 publishes its manual rewrites as `<topic>_<turn><TAB>rewrite` lines, not in the JSON."""
    topics = damaged_topics(
        tmp_path, "cast_topics.json", lambda t: [turn.pop("manual_rewritten_utterance") for turn in t[0]["turn"]]
    )

    imported = imported_cast(
        topics, COLLECTIONS / "cast_qrels.txt", identifier="cast.tiny", rewrites=COLLECTIONS / "cast_rewrites.tsv"
    )

    assert [q.turn.rewrite for q in imported.question_set.questions] == [
        "How do I fix a flat tyre on my bicycle?",
        "What should I bring along to fix a flat bicycle tyre on a ride?",
        "How often should I check the air pressure of my bicycle tyres?",
        "What is a sourdough starter?",
        "Why does my sourdough starter smell sour?",
    ]
    stray = tmp_path / "rewrites.tsv"
    stray.write_text("101_1\tfine\n109_1\tof a topic nobody has\n")
    with pytest.raises(InvalidInputError, match=rf"^{stray}: rewrite of '109_1', which names no turn"):
        imported_cast(COLLECTIONS / "cast_topics.json", COLLECTIONS / "cast_qrels.txt", identifier="x.y", rewrites=stray)
