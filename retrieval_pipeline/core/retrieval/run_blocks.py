"""The vectorised half of reading a TREC run: Arrow parses it a piece at a time, numpy picks the rows to keep.

A block keeps, for each query, the rows scoring at least its `depth`-th best score in that block (ties
included, as the document-id tie-break comes later). A query's first `depth` documents overall are
among the rows its blocks kept, so the final exact sort only sees those: a few percent of the file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrieval_pipeline.core.base.arrow_arrays import from_python, indices, numbers, python_values, release_unused

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

TREC_COLUMNS = ("query_id", "iteration", "document_id", "rank", "score", "tag")
TREC_ORDER = [("query", "ascending"), ("score", "descending"), ("document_id", "descending")]
PIECE_BYTES = 2 << 20


def read_single_delimited(piece: bytes, delimiter: str) -> pa.Table:
    """The common case and the fast one: columns separated by exactly one space (or one tab) on every line.

    Raises ValueError (pyarrow.ArrowInvalid) on any other line, so the caller can fall back.
    """
    import pyarrow as pa
    from pyarrow import csv

    label = pa.dictionary(pa.int32(), pa.string())  # repeated on many lines: stored once per piece
    types = {
        "query_id": label,
        "iteration": label,
        "document_id": pa.string(),
        "rank": pa.float64(),
        "score": pa.float64(),
        "tag": label,
    }
    table = csv.read_csv(
        pa.BufferReader(piece),
        read_options=csv.ReadOptions(column_names=TREC_COLUMNS),
        parse_options=csv.ParseOptions(delimiter=delimiter, quote_char=False),
        convert_options=csv.ConvertOptions(column_types=types, null_values=[], strings_can_be_null=False),
    ).combine_chunks()
    _check_fields(piece, table, delimiter)
    return table


def _check_fields(piece: bytes, table: pa.Table, delimiter: str) -> None:
    """A field holding the other kind of blank hides a delimiter, and an empty field is a doubled or
    leading one: either way a whitespace split, as trec_eval does, would see other columns."""
    import pyarrow.compute as pc

    ids = [table.column("query_id").chunk(0).dictionary, table.column("document_id")]
    labels = [table.column(name).chunk(0).dictionary for name in ("iteration", "tag")]
    if (
        (b" " if delimiter == "\t" else b"\t") in piece
        or any(len(text) and pc.min(pc.binary_length(text)).as_py() == 0 for text in ids)
        or any(pc.any(pc.match_substring_regex(label, r"^$|\s")).as_py() for label in labels)
    ):
        raise ValueError("an empty field or whitespace inside a field")
    _check_numbers(table)


def _check_numbers(table: pa.Table) -> None:
    import pyarrow.compute as pc

    if any(pc.any(pc.is_nan(table.column(name))).as_py() for name in ("rank", "score")):
        raise ValueError("a rank or score is NaN")


def read_any_whitespace(data: bytes) -> pa.Table:
    """Any run of whitespace between columns, as trec_eval and ir_measures accept: lines split in Arrow."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv

    lines = csv.read_csv(
        pa.BufferReader(data),
        read_options=csv.ReadOptions(column_names=["line"]),
        parse_options=csv.ParseOptions(delimiter="\x01", quote_char=False),
        convert_options=csv.ConvertOptions(column_types={"line": pa.string()}, strings_can_be_null=False),
    ).column("line")
    lines = pc.utf8_trim_whitespace(lines)
    fields = pc.utf8_split_whitespace(lines.filter(pc.cast(pc.utf8_length(lines), pa.bool_())))  # drop blank lines
    if pc.min_max(pc.list_value_length(fields)).as_py() not in ({"min": None, "max": None}, {"min": 6, "max": 6}):
        raise ValueError(f"a line does not have {len(TREC_COLUMNS)} columns")
    table = pa.table(
        {
            "query_id": pc.list_element(fields, 0),
            "document_id": pc.list_element(fields, 2),
            "rank": pc.cast(pc.list_element(fields, 3), pa.float64()),
            "score": pc.cast(pc.list_element(fields, 4), pa.float64()),
        }
    )
    _check_numbers(table)
    return table


def keep_top(batch: pa.RecordBatch, depth: int | None) -> pa.Table:
    """The rows of one block that can be among their query's first `depth` (every row when None)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    queries = batch.column("query_id")
    if not pa.types.is_dictionary(queries.type):
        queries = pc.dictionary_encode(queries)
    codes = numbers(queries.indices)
    rows = indices(np.arange(len(codes)) if depth is None else _rows_within(codes, numbers(batch.column("score")), depth))
    return pa.table(
        {
            "query": queries.dictionary.take(queries.indices.take(rows)),
            "score": batch.column("score").take(rows),
            "document_id": batch.column("document_id").take(rows),
        }
    )


def _rows_within(codes: np.ndarray, scores: np.ndarray, depth: int) -> np.ndarray:
    """Runs export each query's lines together, best first; only a block that is not so gets sorted."""
    import numpy as np

    if not len(codes):
        return np.arange(0)
    order = None
    if np.any((codes[1:] == codes[:-1]) & (scores[1:] > scores[:-1])):
        order = np.lexsort((-scores, codes))
        codes, scores = codes[order], scores[order]
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    lengths = np.diff(np.append(starts, len(codes)))
    kth = np.full(len(starts), -np.inf)
    deep = lengths >= depth
    kth[deep] = scores[starts[deep] + depth - 1]
    rows = np.flatnonzero(scores >= np.repeat(kth, lengths))
    return rows if order is None else np.sort(order[rows])


def rankings_from_rows(kept: list[pa.Table], depth: int | None) -> tuple[pa.Array, dict[str, tuple[int, int]]]:
    """One exact trec_eval sort over the kept rows; query ids are dictionary-encoded so it sorts integers.

    Returns the ids in query order and, per query, the span of its first `depth` in them.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if not kept:
        return from_python([], pa.string()), {}
    table = pa.concat_tables(kept)
    queries = pc.dictionary_encode(table.column("query")).unify_dictionaries().combine_chunks()
    keyed = pa.table({"query": queries.indices, "score": table.column("score"), "document_id": table.column("document_id")})
    order = pc.sort_indices(keyed, sort_keys=TREC_ORDER)
    groups = pc.run_end_encode(queries.indices.take(order))
    ends = numbers(groups.run_ends).tolist()
    names = python_values(queries.dictionary.take(groups.values))
    spans = {
        name: (start, end if depth is None else min(end, start + depth)) for name, start, end in zip(names, [0, *ends[:-1]], ends)
    }
    document_ids = table.column("document_id").take(order).combine_chunks()
    del table, keyed, order
    release_unused()
    return document_ids, spans
