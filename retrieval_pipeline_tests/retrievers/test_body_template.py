"""The http kind's `body_template`: where placeholders are recognised, how they are filled, and what is
refused before any request is made."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.retrievers.http.body_template import filled, placeholders_in
from retrieval_pipeline.retrievers.http.retriever import HttpKind

QUESTION = 'what is "lift" \\ drag\n\tratio {limit} {vector}'
URL = "http://127.0.0.1:9/docs/_search"


def test_whole_values_become_the_question_the_number_and_the_vector_anywhere_in_nested_json():
    template = {"size": "{limit}", "query": {"bool": {"should": [{"match": {"text": "{question}"}}]}}, "v": ["{vector}"]}
    body = filled(template, QUESTION, 7, [0.5, -1.0])
    assert body == {"size": 7, "query": {"bool": {"should": [{"match": {"text": QUESTION}}]}}, "v": [[0.5, -1.0]]}
    assert json.loads(json.dumps(body)) == body


def test_inside_a_string_the_question_stays_one_string_literal_of_the_query_it_is_embedded_in():
    template = {"query": '{ Get { Doc(bm25: {query: "{question}"}, limit: {limit}) { id } } }'}
    graphql = filled(template, QUESTION, 5)["query"]
    literal = graphql.split("query: ", 1)[1].split("}, limit")[0]
    assert json.loads(literal) == QUESTION  # GraphQL string literals share JSON's escapes
    assert graphql.endswith("limit: 5) { id } } }") and "{ Get { Doc(bm25: {query:" in graphql


def test_keys_other_braces_and_the_template_itself_are_left_as_written():
    template = {"{question}": "select * where {targetHits: 10} nearestNeighbor(e, q)", "n": 3, "flag": True}
    original = copy.deepcopy(template)
    assert filled(template, "q", 1) == template and template == original
    assert placeholders_in(template) == set()


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"method": "GET"}, "method", "a GET request has none"),
        ({"extra_body": {"a": 1}}, "extra_body", "replaces extra_body"),
        ({"question_field": "q"}, "question_field", "replaces question_field"),
        ({"body_template": {"size": "{limit}"}}, "body_template", "neither {question} nor {vector}"),
        ({"body_template": {"q": "{question}", "v": "near {vector}"}}, "body_template", "not inside the string at v"),
        ({"body_template": {"knn": {"query_vector": "{vector}"}}}, "query_encoder", "go together"),
        ({"query_encoder": {"encoder": {"kind": "callable", "function": "json:dumps"}}}, "query_encoder", "go together"),
    ],
)
def test_a_template_that_cannot_work_is_refused_naming_the_field(context, changes, field, message):
    params = {"url": URL, "body_template": {"query": {"match": {"text": "{question}"}}}, **changes}
    with pytest.raises(InvalidInputError, match=message) as refused:
        HttpKind.parse("es", params, context)
    assert (
        f"retrievers.es.{field}" in str(refused.value) or f"field '{field}'" in str(refused.value) or field in str(refused.value)
    )


def test_the_query_encoders_own_settings_are_checked_under_its_key(context):
    params = {
        "url": URL,
        "body_template": {"knn": {"query_vector": "{vector}"}},
        "query_encoder": {"model": "missing/model.onnx", "runtime": "onnx"},
    }
    with pytest.raises(InvalidInputError, match="query_encoder.model"):
        HttpKind.parse("es", params, context)


@pytest.mark.parametrize(
    ("written", "where", "message"),
    [
        ("{range: {published: {gte: 2024-01-01}}}", "body_template.filter.range.published.gte", "unquoted 2024-01-01 as a date"),
        ("{range: {at: {lt: 2024-01-01T10:00:00Z}}}", "body_template.filter.range.at.lt", "unquoted 2024-01-01T10:00:00+00:00"),
        ("{min_score: .nan}", "body_template.filter.min_score", "nan (YAML's .nan or .inf)"),
        ("[{boost: -.inf}]", "body_template.filter[0].boost", "-inf (YAML's .nan or .inf)"),
        ("{terms: !!set {a, b}}", "body_template.filter.terms", "a YAML !!set"),
        ("{blob: !!binary aGVsbG8=}", "body_template.filter.blob", "a YAML !!binary (b'hello')"),
        ("{2024-01-01: recent}", "body_template.filter", "the key 2024-01-01 is not text"),
    ],
)
def test_a_yaml_value_json_cannot_hold_is_refused_when_checked_naming_its_key_path(context, written, where, message):
    template = {"query": {"match": {"text": "{question}"}}, "filter": yaml.safe_load(written)}
    with pytest.raises(InvalidInputError) as refused:
        HttpKind.parse("es", {"url": URL, "body_template": template}, context)
    assert f"retrievers.es: field '{where}': not JSON: " in str(refused.value)
    assert message in str(refused.value)
