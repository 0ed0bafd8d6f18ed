"""`retrieval-eval import cast|ikat|qrecc|topiocqa`: conversational collections to golden set files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from retrieval_pipeline.core.golden.conversation_imports.cast import imported_cast
from retrieval_pipeline.core.golden.conversation_imports.records import imported_conversation_records
from retrieval_pipeline.core.golden.question_files import load_question_set_file

COLLECTIONS = Path(__file__).parents[1] / "core" / "golden" / "conversation_imports" / "collections"


def test_import_cast_writes_conversations_that_load_back_and_names_the_turns_it_left_out(cli, tmp_path):
    out = tmp_path / "sets" / "cast.yaml"
    topics, qrels, corpus = (COLLECTIONS / name for name in ("cast_topics.json", "cast_qrels.txt", "corpus.jsonl"))

    result = cli(
        "import", "cast", "--topics", str(topics), "--qrels", str(qrels), "--corpus", str(corpus),
        "--identifier", "cast.tiny", "--out", str(out),
    )  # fmt: skip

    assert result.exit_code == 0, result.stderr
    assert "Wrote 5 questions (match 4, gap 1) in 2 conversations of set cast.tiny" in result.stdout
    assert result.stderr == (
        "warning: left out 2 queries without a relevant judgement, or after one in their conversation "
        "(a turn is asked with its whole history): 102/3, 102/4\n"
    )
    assert load_question_set_file(out) == imported_cast(topics, qrels, identifier="cast.tiny", corpus=corpus).question_set
    assert "conversations:" in out.read_text()


def test_import_ikat_reports_in_json_and_tags_forms_against_the_responses_without_a_corpus(cli, tmp_path):
    out = tmp_path / "ikat.jsonl"

    result = cli(
        "import", "ikat", "--topics", str(COLLECTIONS / "ikat_topics.json"), "--qrels", str(COLLECTIONS / "ikat_qrels.txt"),
        "--identifier", "ikat.tiny", "--name", "iKAT written here", "--out", str(out), "--json",
    )  # fmt: skip

    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert (payload["questions"], payload["conversations"], payload["left_out"]) == (5, 2, [])
    loaded = load_question_set_file(out)
    assert loaded.name == "iKAT written here" and "canonical responses" in loaded.description


@pytest.mark.parametrize(
    ("command", "name", "style"), [("qrecc", "qrecc.jsonl", "QReCC"), ("topiocqa", "topiocqa.jsonl", "TopiOCQA")]
)
def test_import_records_writes_the_conversations_of_a_json_lines_file(cli, tmp_path, command, name, style):
    out = tmp_path / f"{command}.json"

    result = cli("import", command, str(COLLECTIONS / name), "--identifier", f"{command}.tiny", "--out", str(out))

    assert result.exit_code == 0, result.stderr
    expected = imported_conversation_records(COLLECTIONS / name, style=style, identifier=f"{command}.tiny")
    assert load_question_set_file(out) == expected.question_set


def test_a_damaged_record_fails_the_import_in_one_line_and_writes_nothing(cli, tmp_path):
    records = tmp_path / "qrecc.jsonl"
    lines = (COLLECTIONS / "qrecc.jsonl").read_text().splitlines()
    broken = json.loads(lines[1]) | {"Turn_no": "second"}
    records.write_text("\n".join([lines[0], json.dumps(broken), *lines[2:]]) + "\n")
    out = tmp_path / "qrecc.yaml"

    result = cli("import", "qrecc", str(records), "--identifier", "qrecc.tiny", "--out", str(out))

    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert f"{records}:2: field 'Turn_no': 'second' is not a turn number" in result.stderr
    assert not out.exists()
