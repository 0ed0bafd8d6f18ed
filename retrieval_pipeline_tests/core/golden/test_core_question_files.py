"""Golden set files (YAML, JSON, JSONL): valid files load the same set; bad ones fail with one clear error."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.question_files import load_question_set_file

SET = {
    "identifier": "demo.support",
    "name": "Support questions",
    "description": "Questions over the support corpus.",
    "questions": [
        {
            "id": "q1",
            "question": "How do I reset my password?",
            "form": "match",
            "expected_document_ids": ["doc-12", "doc-40"],
            "hard_class": "near-duplicate",
            "answer_gist": "Use the reset link on the login page.",
        },
        {"id": "q2", "question": "I can't get in any more", "form": "gap", "expected_document_ids": ["doc-12"]},
        {"id": "q3", "question": "Do you sell hardware?", "form": "gap", "expected_document_ids": []},
    ],
}

FORMATS = [".yaml", ".yml", ".json", ".jsonl"]


def write_set(folder, data, suffix, name="set"):
    path = folder / f"{name}{suffix}"
    if suffix in (".yaml", ".yml"):
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    elif suffix == ".json":
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    else:
        header = {key: value for key, value in data.items() if key != "questions"}
        lines = [json.dumps(header)] + [json.dumps(q) for q in data.get("questions", [])]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", FORMATS)
def test_a_valid_set_file_loads_with_all_its_labels(tmp_path, suffix):
    loaded = load_question_set_file(write_set(tmp_path, SET, suffix))
    assert loaded.identifier == "demo.support"
    assert loaded.name == "Support questions"
    assert [q.id for q in loaded.questions] == ["q1", "q2", "q3"]
    assert loaded.question("q1").expected_document_ids == ("doc-12", "doc-40")
    assert loaded.question("q1").answer_gist == "Use the reset link on the login page."
    assert loaded.question("q3").expected_document_ids == ()


def test_yaml_json_and_jsonl_files_load_the_identical_set(tmp_path):
    loaded = [load_question_set_file(write_set(tmp_path, SET, suffix)) for suffix in FORMATS]
    assert all(other == loaded[0] for other in loaded[1:])


def test_a_hand_written_yaml_file_loads(tmp_path):
    path = tmp_path / "hand.yaml"
    path.write_text(
        """
identifier: hand.written
name: Hand written
questions:
  - id: a
    question: Where is the manual?
    form: match
    expected_document_ids: [manual]
""",
        encoding="utf-8",
    )
    loaded = load_question_set_file(path)
    assert loaded.description == ""
    assert loaded.question("a").hard_class is None


def invalid(mutate):
    data = copy.deepcopy(SET)
    mutate(data)
    return data


def set_field(index, field, value):
    return lambda data: data["questions"][index].__setitem__(field, value)


def drop_field(index, field):
    return lambda data: data["questions"][index].pop(field)


# (case, mutation, text the message must hold: the question id and the field)
QUESTION_ERRORS = [
    ("missing-field", drop_field(1, "form"), ["q2", "form", "required"]),
    ("unknown-field", set_field(1, "colour", "red"), ["q2", "colour", "not a known field"]),
    ("unknown-form", set_field(1, "form", "fuzzy"), ["q2", "form", "fuzzy"]),
    ("blank-question", set_field(1, "question", "   "), ["q2", "question"]),
    ("empty-expected-id", set_field(1, "expected_document_ids", ["doc-1", ""]), ["q2", "expected_document_ids"]),
    (
        "duplicate-expected-id",
        set_field(1, "expected_document_ids", ["doc-1", "doc-1"]),
        ["q2", "expected_document_ids", "doc-1"],
    ),
    ("empty-hard-class", set_field(1, "hard_class", ""), ["q2", "hard_class"]),
    ("expected-not-a-list", set_field(1, "expected_document_ids", "doc-1"), ["q2", "expected_document_ids"]),
]


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
@pytest.mark.parametrize(("case", "mutate", "named"), QUESTION_ERRORS, ids=[case for case, _, _ in QUESTION_ERRORS])
def test_a_bad_question_fails_naming_the_file_question_and_field(tmp_path, suffix, case, mutate, named):
    path = write_set(tmp_path, invalid(mutate), suffix)
    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(path)
    message = str(caught.value)
    assert str(path) in message
    for text in named:
        assert text in message, f"{text!r} missing from {message!r}"
    assert caught.value.key == "question 'q2'"


@pytest.mark.parametrize("field", ["Question", "Form", "expected_documents"])
def test_an_unknown_field_is_named_whatever_its_spelling(tmp_path, field):
    """A capitalised key is a common typo in hand-written YAML; the error must still name it."""
    path = write_set(tmp_path, invalid(set_field(0, field, "x")), ".yaml")
    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(path)
    assert caught.value.field == field, f"the error must name the field {field!r}: {caught.value}"
    assert f"field '{field}'" in str(caught.value)


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
def test_a_question_with_an_empty_id_is_named_by_its_position(tmp_path, suffix):
    path = write_set(tmp_path, invalid(set_field(2, "id", "")), suffix)
    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(path)
    assert str(path) in str(caught.value)
    assert "question #3" in str(caught.value)
    assert caught.value.field == "id"


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
def test_duplicate_question_ids_in_a_file_fail_naming_the_id(tmp_path, suffix):
    path = write_set(tmp_path, invalid(set_field(2, "id", "q1")), suffix)
    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(path)
    assert str(path) in str(caught.value)
    assert "duplicate question id 'q1'" in str(caught.value)


@pytest.mark.parametrize("identifier", ["", "Demo", ".demo", "demo.", "demo set", "demo..set"])
@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
def test_a_bad_set_identifier_in_a_file_fails_naming_the_field(tmp_path, suffix, identifier):
    path = write_set(tmp_path, invalid(lambda data: data.__setitem__("identifier", identifier)), suffix)
    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(path)
    assert str(path) in str(caught.value)
    assert caught.value.field == "identifier"


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
def test_a_set_file_with_no_questions_fails(tmp_path, suffix):
    path = write_set(tmp_path, invalid(lambda data: data.__setitem__("questions", [])), suffix)
    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(path)
    assert str(path) in str(caught.value)
    assert caught.value.field == "questions"


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
def test_an_unknown_set_level_field_fails(tmp_path, suffix):
    path = write_set(tmp_path, invalid(lambda data: data.__setitem__("owner", "me")), suffix)
    with pytest.raises(InvalidInputError, match="owner"):
        load_question_set_file(path)


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
def test_a_set_file_without_a_name_fails(tmp_path, suffix):
    path = write_set(tmp_path, invalid(lambda data: data.pop("name")), suffix)
    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(path)
    assert caught.value.field == "name"
    assert "required" in str(caught.value)


def test_invalid_yaml_fails_naming_the_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("identifier: demo\nquestions: [\n  - id: q1\n", encoding="utf-8")
    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(path)
    assert str(path) in str(caught.value)
    assert "invalid YAML" in str(caught.value)


def test_invalid_json_fails_naming_the_file(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"identifier": "demo", ', encoding="utf-8")
    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(path)
    assert str(path) in str(caught.value)
    assert "invalid JSON" in str(caught.value)


def test_invalid_jsonl_line_fails_naming_the_file_and_line(tmp_path):
    path = write_set(tmp_path, SET, ".jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = '{"id": "q2", "question": '
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(path)
    assert str(path) in str(caught.value)
    assert f"{path}:3:26: invalid JSON" in str(caught.value)


def test_a_jsonl_file_whose_first_line_is_not_a_header_fails(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text('["not", "a", "header"]\n', encoding="utf-8")
    with pytest.raises(InvalidInputError, match="line 1"):
        load_question_set_file(path)


def test_a_yaml_file_that_is_not_a_mapping_fails(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="mapping"):
        load_question_set_file(path)


def test_a_missing_file_fails_naming_it(tmp_path):
    path = tmp_path / "absent.yaml"
    with pytest.raises(InvalidInputError) as caught:
        load_question_set_file(path)
    assert str(path) in str(caught.value)


def test_an_unsupported_file_type_fails(tmp_path):
    path = tmp_path / "set.csv"
    path.write_text("id,question\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="unsupported"):
        load_question_set_file(path)
