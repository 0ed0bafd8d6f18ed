"""Arrow columns as JSON text: the same bytes `json.dumps(..., ensure_ascii=False, allow_nan=False)` writes."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from retrieval_pipeline.core.base.json_text import json_float_objects, json_floats, json_string_lists, json_strings


def dumped(values) -> list[str]:
    return [json.dumps(value, ensure_ascii=False, allow_nan=False) for value in values]


@pytest.mark.parametrize(
    "values",
    [
        ["q1", "naïve", "日本", None, ""],
        ['say "hi"', "back\\slash", "tab\there", "line\nbreak", "\x01", "\u2028", "%s %r"],
        [],
    ],
)
def test_strings_are_written_as_json_writes_them(values):
    assert json_strings(pa.array(values, pa.string())) == dumped(values)


@pytest.mark.parametrize(
    "values",
    [
        [["D1", "D2"], [], ["naïve"], ["only"]],
        [['a"b'], [], ["c\\d", "e"]],
        [["x"], None, []],
        [],
    ],
)
def test_string_lists_are_written_as_json_writes_them(values):
    assert json_string_lists(pa.array(values, pa.list_(pa.string()))) == dumped(values)


def test_floats_keep_their_repr_and_sign():
    values = [0.0, -0.0, 1.0, 0.1, 1 / 3, 1e-300, 12345678.9, 0.1, -0.0]
    assert json_floats(pa.array(values, pa.float64())) == dumped(values)
    assert json_floats(pa.array([1.5, None], pa.float64())) == ["1.5", "null"]


def test_objects_of_floats_are_formatted_once_per_distinct_row_yet_row_by_row():
    columns = {"mrr@3": np.array([0.5, 0.5, -0.0, 0.0, 1.0]), "recall@1": np.array([1.0, 1.0, 0.0, 0.0, 0.25])}
    written = np.array([True, True, True, True, False])
    rows = [dict(zip(columns, row)) if keep else None for keep, row in zip(written, zip(*(c.tolist() for c in columns.values())))]
    assert json_float_objects(columns, written) == dumped(rows)


def test_a_value_json_refuses_is_refused_the_same_way():
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        json_floats(pa.array([1.0, float("nan")], pa.float64()))
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        json_float_objects({"mrr@3": np.array([float("inf")])}, np.array([True]))
    assert json_float_objects({"mrr@3": np.array([float("inf")])}, np.array([False])) == ["null"]
