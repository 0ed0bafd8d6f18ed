"""Golden question and set validation (SPEC section 1) on the models themselves."""

from __future__ import annotations

import pytest
from core_helpers import question, question_set
from pydantic import ValidationError

from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet, QuestionForm, check_identifier


def make_question(**overrides):
    fields = {"id": "q1", "question": "What is retrieval?", "form": "match", "expected_document_ids": ["d1"]}
    return GoldenQuestion(**{**fields, **overrides})


def make_set(**overrides):
    fields = {"identifier": "demo.set", "name": "Demo", "description": "", "questions": [make_question()]}
    return GoldenQuestionSet(**{**fields, **overrides})


def test_a_valid_question_keeps_its_labels():
    q = make_question(expected_document_ids=["d1", "d2"], hard_class="near-duplicate", answer_gist="the gist")
    assert q.form is QuestionForm.MATCH
    assert q.expected_document_ids == ("d1", "d2")
    assert (q.hard_class, q.answer_gist) == ("near-duplicate", "the gist")


def test_an_empty_expected_list_declares_no_document_answers():
    assert make_question(expected_document_ids=[]).expected_document_ids == ()


def test_hard_class_is_free_form():
    assert make_question(hard_class="my-own-class").hard_class == "my-own-class"


def test_questions_are_immutable():
    q = make_question()
    with pytest.raises(ValidationError):
        q.question = "changed"


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"id": ""}, "id"),
        ({"id": "   "}, "id"),
        ({"question": ""}, "question"),
        ({"question": " \t\n"}, "question"),
        ({"expected_document_ids": [""]}, "expected_document_ids"),
        ({"expected_document_ids": ["d1", "d1"]}, "expected_document_ids"),
        ({"hard_class": ""}, "hard_class"),
        ({"hard_class": "  "}, "hard_class"),
        ({"form": "fuzzy"}, "form"),
        ({"colour": "red"}, "colour"),
    ],
    ids=[
        "empty-id",
        "blank-id",
        "empty-question",
        "blank-question",
        "empty-expected-id",
        "duplicate-expected-id",
        "empty-hard-class",
        "blank-hard-class",
        "unknown-form",
        "unknown-field",
    ],
)
def test_invalid_question_is_refused_naming_the_field(overrides, field):
    with pytest.raises(ValidationError) as caught:
        make_question(**overrides)
    assert caught.value.errors()[0]["loc"][0] == field


@pytest.mark.parametrize("missing", ["id", "question", "form", "expected_document_ids"])
def test_question_without_a_required_field_is_refused(missing):
    fields = {"id": "q1", "question": "What?", "form": "gap", "expected_document_ids": []}
    del fields[missing]
    with pytest.raises(ValidationError) as caught:
        GoldenQuestion(**fields)
    assert caught.value.errors()[0]["loc"] == (missing,)


@pytest.mark.parametrize("identifier", ["demo", "demo.set", "a_b.c1.d_2", "2024", "x.y.z"])
def test_good_set_identifiers_are_accepted(identifier):
    assert make_set(identifier=identifier).identifier == identifier


@pytest.mark.parametrize(
    "identifier",
    ["", "Demo", "demo.Set", ".demo", "demo.", "demo set", " demo", "demo..set", "demo-set", "demo/set"],
    ids=[
        "empty",
        "uppercase",
        "uppercase-part",
        "leading-dot",
        "trailing-dot",
        "space",
        "leading-space",
        "double-dot",
        "dash",
        "slash",
    ],
)
def test_bad_set_identifiers_are_refused(identifier):
    with pytest.raises(ValidationError) as caught:
        make_set(identifier=identifier)
    assert caught.value.errors()[0]["loc"] == ("identifier",)
    with pytest.raises(ValueError, match="must match"):
        check_identifier(identifier)


def test_a_set_needs_a_name():
    with pytest.raises(ValidationError):
        make_set(name="")


def test_a_set_with_no_questions_is_refused():
    with pytest.raises(ValidationError) as caught:
        make_set(questions=[])
    assert caught.value.errors()[0]["loc"] == ("questions",)


def test_duplicate_question_ids_in_a_set_are_refused_naming_the_id():
    with pytest.raises(ValidationError, match="duplicate question id 'q1'"):
        make_set(questions=[make_question(), make_question(question="Another text")])


def test_set_finds_questions_and_counts_forms_and_classes():
    qs = question_set(
        question("a", form="gap", hard_class="boilerplate"),
        question("b", form="match"),
        question("c", form="gap", hard_class="normal"),
    )
    assert qs.question("b").id == "b"
    with pytest.raises(KeyError):
        qs.question("zzz")
    assert qs.counts_by_form() == {"gap": 2, "match": 1}
    assert qs.counts_by_hard_class() == {"boilerplate": 1, "normal": 1}
