"""Between Arrow, numpy and Python values through the arrays' buffers, never `pa.array` or `to_numpy`.

Every `pa.array` call (and `pa.table` of Python lists, `from_pylist`, a numpy index handed to `take`)
first asks whether it was given a pandas object, and `Array.to_numpy` converts through pandas' own
machinery: either imports pandas, a heavy import in a command that never touches pandas. So the project's values cross between Arrow and numpy or Python here, for
the few types its tables hold. Arrow's freed buffers are handed back to the system here too
(`release_unused`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from itertools import chain
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_UNITS = {"s": timedelta(seconds=1), "ms": timedelta(milliseconds=1), "us": timedelta(microseconds=1)}


def from_numpy(values: np.ndarray, valid: np.ndarray | None = None, type: pa.DataType | None = None) -> pa.Array:
    """A numeric or boolean column; `valid` False marks a null. Numbers are shared with numpy, not copied."""
    import numpy as np
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    type = type or pa.from_numpy_dtype(values.dtype)
    data = np.packbits(values, bitorder="little") if values.dtype == np.bool_ else values
    return pa.Array.from_buffers(type, len(values), [_validity(valid), pa.py_buffer(data)])


def from_python(values: Sequence, type: pa.DataType) -> pa.Array:
    """A column of `type` (string, integer, float, boolean, timestamp, list or struct of those); None is null."""
    import numpy as np
    import pyarrow as pa

    count = len(values)
    valid = None if all(value is not None for value in values) else np.fromiter((v is not None for v in values), bool, count)
    if pa.types.is_string(type):
        encoded = (
            list(map(str.encode, values)) if valid is None else [b"" if value is None else value.encode() for value in values]
        )
        offsets = _offsets(np.fromiter(map(len, encoded), np.int64, count))
        return pa.Array.from_buffers(type, count, [_validity(valid), pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])
    if pa.types.is_list(type):
        present_values = values if valid is None else [value for value in values if value is not None]
        lengths = np.fromiter((0 if value is None else len(value) for value in values), np.int64, count)
        items = from_python(list(chain.from_iterable(present_values)), type.value_type)
        return pa.Array.from_buffers(type, count, [_validity(valid), pa.py_buffer(_offsets(lengths))], children=[items])
    if pa.types.is_struct(type):
        children = [from_python([None if value is None else value[field.name] for value in values], field.type) for field in type]
        return pa.StructArray.from_arrays(children, fields=list(type), mask=None if valid is None else from_numpy(~valid))
    if pa.types.is_timestamp(type):
        step = _UNITS[type.unit]
        ticks = np.fromiter(((v - _EPOCH) // step if v is not None else 0 for v in values), np.int64, count)
        return from_numpy(ticks, valid).view(type)
    if pa.types.is_integer(type) or pa.types.is_floating(type) or pa.types.is_boolean(type):
        dtype = (
            np.bool_
            if pa.types.is_boolean(type)
            else np.dtype(f"{'f' if pa.types.is_floating(type) else 'i'}{type.bit_width // 8}")
        )
        return from_numpy(np.fromiter((0 if v is None else v for v in values), dtype, count), valid, type)
    raise TypeError(f"no conversion to Arrow {type} here")


def from_rows(rows: Sequence[Mapping], schema: pa.Schema) -> pa.Table:
    """A table of `schema` from one mapping per row (every field present)."""
    import pyarrow as pa

    return pa.Table.from_arrays([from_python([row[field.name] for row in rows], field.type) for field in schema], schema=schema)


def list_array(offsets: np.ndarray, values: pa.Array) -> pa.ListArray:
    """Lists cut from `values` at `offsets` (one more than the lists, starting at 0)."""
    import numpy as np
    import pyarrow as pa

    return pa.ListArray.from_arrays(from_numpy(offsets.astype(np.int32, copy=False)), values)


def indices(positions: np.ndarray) -> pa.Array:
    """Row numbers for `take`, which would import pandas to read a numpy array."""
    import numpy as np

    return from_numpy(positions.astype(np.int64, copy=False))


def numbers(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A numeric or boolean column's values as numpy (what a null slot holds is unspecified); numbers are
    shared with Arrow, not copied."""
    import numpy as np
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    data = array.buffers()[1]
    if pa.types.is_boolean(array.type):
        if data is None:
            return np.zeros(0, bool)
        bits = np.unpackbits(np.frombuffer(data, np.uint8), bitorder="little")
        return bits[array.offset : array.offset + len(array)].astype(bool)
    kind = "f" if pa.types.is_floating(array.type) else "i" if pa.types.is_signed_integer(array.type) else "u"
    dtype = np.dtype(f"{kind}{array.type.bit_width // 8}")
    if data is None:
        return np.zeros(0, dtype)
    return np.frombuffer(data, dtype, count=len(array), offset=array.offset * dtype.itemsize)


def python_values(array: pa.Array | pa.ChunkedArray) -> list:
    """A string, list-of-strings (as tuples), numeric or boolean column as Python values, None for null.

    Sliced from the buffers in a few bulk steps: `to_pylist` builds an Arrow scalar per value, ten times
    slower on a list column.
    """
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if not len(array):
        return []
    if pa.types.is_string(array.type):
        bounds = _bounds(array)
        raw = array.buffers()[2]
        raw = b"" if raw is None else raw.to_pybytes()
        if raw.isascii():  # byte offsets are character offsets
            text = raw.decode("ascii")
            values = [text[start:end] for start, end in zip(bounds, bounds[1:])]
        else:
            values = [raw[start:end].decode() for start, end in zip(bounds, bounds[1:])]
    elif pa.types.is_list(array.type):
        bounds = _bounds(array)
        items = python_values(array.values.slice(bounds[0], bounds[-1] - bounds[0]))
        values = [tuple(items[start - bounds[0] : end - bounds[0]]) for start, end in zip(bounds, bounds[1:])]
    else:
        values = numbers(array).tolist()
    if array.null_count:
        values = [value if ok else None for value, ok in zip(values, present(array).tolist())]
    return values


def _bounds(array: pa.Array) -> list[int]:
    """The offsets of a string or list array (one more than its values), as Python ints."""
    import numpy as np

    return np.frombuffer(array.buffers()[1], np.int32, count=len(array) + 1, offset=array.offset * 4).tolist()


def present(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """True where the column holds a value, False where it holds null."""
    return numbers(array.is_valid())


def release_unused() -> None:
    """Give Arrow's freed buffers back to the system after a large, one-off piece of work.

    Allocators keep freed memory for reuse. Parsing a multi-million-line run file or writing a large
    Parquet file frees memory this process never asks for again, and the rest of the evaluation would
    stack its own on top of it. Returned once, after the whole file: returning it after every piece would
    cost the parse dearly in page faults.
    """
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def _offsets(lengths: np.ndarray) -> np.ndarray:
    import numpy as np

    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _validity(valid: np.ndarray | None):
    import numpy as np
    import pyarrow as pa

    return None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
