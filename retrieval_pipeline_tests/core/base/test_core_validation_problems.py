"""The one problem a pydantic error is reduced to, for values that may take several shapes (unions of
models, as a search engine's filter is): the complaint about the shape the user meant, at the keys the
user wrote, not the first of dozens about the shapes they did not mean."""

from __future__ import annotations

import datetime

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from retrieval_pipeline.core.base.errors import validation_problem


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MatchValue(Strict):
    value: str | int


class MatchAny(Strict):
    any: list[str]


class Range(Strict):
    gt: float | None = None
    lt: float | None = None


class DatetimeRange(Strict):
    gt: datetime.datetime | datetime.date | None = None


class FieldCondition(Strict):
    key: str
    match: MatchValue | MatchAny | None = None
    range: Range | DatetimeRange | None = None


class IsEmptyCondition(Strict):
    is_empty: str


class HasIdCondition(Strict):
    has_id: list[int]


class Filter(Strict):
    must: list[FieldCondition | IsEmptyCondition | HasIdCondition] | FieldCondition | None = None
    should: list[FieldCondition | IsEmptyCondition | HasIdCondition] | None = None
    date: str | None = None


def problem(value: dict) -> tuple[list[str], str]:
    with pytest.raises(ValidationError) as raised:
        Filter.model_validate(value)
    return validation_problem(raised.value, Filter)


def test_a_misspelt_key_deep_in_a_union_is_the_one_problem_named_with_the_key_meant():
    assert problem({"must": [{"key": "tenant", "match": {"valu": "acme"}}]}) == (
        ["must", "0", "match", "valu"],
        "is not a known field; did you mean 'value'?",
    )


def test_a_misspelt_key_of_a_condition_names_the_condition_s_own_keys():
    assert problem({"must": [{"kye": "tenant", "match": {"value": "acme"}}]}) == (
        ["must", "0", "kye"],
        "is not a known field; did you mean 'key'?",
    )


def test_a_wrong_value_is_judged_against_the_shape_it_came_closest_to():
    assert problem({"should": [{"key": "year", "range": {"gt": "recent"}}]}) == (
        ["should", "0", "range", "gt"],
        "Input should be a valid number, unable to parse string as a number",
    )


def test_a_value_of_the_wrong_type_is_named_where_it_was_written():
    assert problem({"must": "tenant"}) == (["must"], "Input should be a valid list")


def test_a_key_named_like_a_type_stays_in_the_path():
    assert problem({"date": 2024}) == (["date"], "Input should be a valid string")
