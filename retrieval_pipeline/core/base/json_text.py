"""Arrow columns as JSON text, exactly as `json.dumps(value, ensure_ascii=False, allow_nan=False)` writes
each value, without making a Python object of every id on the way.

A large run's `--json` rows are mostly document ids: 20,000 questions hold hundreds of thousands. Where
no string of a column needs an escape, Arrow puts the quotes and separators around them in bulk; a column
that does need one goes through Python's own encoder value by value, so the text is the same either way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from retrieval_pipeline.core.base.arrow_arrays import from_python, numbers, python_values

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
"""The encoder every `--json` document is written with (cli/render/payloads.py): its text is the reference."""

_ESCAPED = r'[\x00-\x1f"\\]'  # what json's string encoder escapes when ensure_ascii is off


def json_strings(array: pa.Array) -> list[str]:
    """Each string as a JSON string, `null` for null."""
    import pyarrow.compute as pc

    if _needs_escapes(array):
        return _encoded(array)
    quote, empty, null = _scalars('"', "", "null")
    return python_values(pc.fill_null(pc.binary_join_element_wise(quote, array, quote, empty), null))


def json_string_lists(array: pa.ListArray) -> list[str]:
    """Each list of strings as a JSON array (`[]` when empty)."""
    import pyarrow.compute as pc

    if array.null_count or _needs_escapes(pc.list_flatten(array)):
        return _encoded(array)
    opening, separator, closing, empty, no_items = _scalars('["', '", "', '"]', "", "[]")
    quoted = pc.binary_join_element_wise(opening, pc.binary_join(array, separator), closing, empty)
    lengths = pc.list_value_length(array)
    return python_values(pc.if_else(pc.greater(lengths, from_python([0], lengths.type)[0]), quoted, no_items))


def json_floats(array: pa.Array) -> list[str]:
    """Each float of a column as JSON (`null` for null)."""
    import numpy as np

    values = numbers(array)
    if array.null_count or not np.isfinite(values).all():
        return _encoded(array)
    return _formatted(values[:, None], "%r")


def json_float_objects(columns: Mapping[str, np.ndarray], written: np.ndarray) -> list[str]:
    """Row by row, the object `{name: float, ...}` of the columns' values, or `null` where `written` is False."""
    import numpy as np

    rows = zip(*(values.tolist() for values in columns.values()))
    if not columns or not all(values.dtype.kind == "f" and np.isfinite(values[written]).all() for values in columns.values()):
        return [ENCODER.encode(dict(zip(columns, row)) if keep else None) for keep, row in zip(written.tolist(), rows)]
    template = "{" + ", ".join(f"{ENCODER.encode(name).replace('%', '%%')}: %r" for name in columns) + "}"
    texts = _formatted(np.column_stack(list(columns.values())), template)
    return [text if keep else "null" for text, keep in zip(texts, written.tolist())]


def _formatted(matrix: np.ndarray, template: str) -> list[str]:
    """`template % row` for each row of finite floats (`%r` is a float's JSON text), formatted once per
    distinct row: a run's scores repeat a few patterns. Rows are told apart by their bits, so 0.0 and
    -0.0 stay two texts."""
    import numpy as np

    if not len(matrix):
        return []
    bits = np.ascontiguousarray(matrix, np.float64).view(np.uint64)
    order = np.lexsort(bits.T[::-1])
    ordered = bits[order]
    starts = np.concatenate(([True], (ordered[1:] != ordered[:-1]).any(axis=1)))
    groups = np.empty(len(order), np.int64)
    groups[order] = np.cumsum(starts) - 1
    texts = [template % tuple(row) for row in ordered[starts].view(np.float64).tolist()]
    return [texts[group] for group in groups.tolist()]


def _needs_escapes(strings: pa.Array) -> bool:
    import pyarrow.compute as pc

    return len(strings) > 0 and pc.any(pc.match_substring_regex(strings, _ESCAPED)).as_py()


def _scalars(*texts: str) -> list[pa.StringScalar]:
    """Arrow string scalars, made without `pa.scalar`, which imports pandas (arrow_arrays.py)."""
    import pyarrow as pa

    return list(from_python(texts, pa.string()))


def _encoded(array: pa.Array) -> list[str]:
    return [ENCODER.encode(value) for value in python_values(array)]
