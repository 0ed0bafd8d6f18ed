"""Reading the rankings another system produced: a TREC run (`qid Q0 docid rank score tag`) or JSONL.

A TREC run is ordered as trec_eval orders it (which ir_measures uses): the rank column is ignored and
documents sort by score descending, ties by document id descending in byte order, so our top-k hit
rates match the Success@k every IR tool reports for the same file. A run may hold millions of lines
while an evaluation looks at a dozen documents per query, so it is read in pieces (pyarrow's CSV
reader) and each piece keeps only the rows that can still be among their query's first `depth`
documents: memory follows what is kept, not the file. Only an irregular file is read whole, and only
a malformed one line by line, to name its first bad line.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from retrieval_pipeline.core.base.arrow_arrays import from_python, indices, list_array
from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.base.text_files import utf8_problem
from retrieval_pipeline.core.retrieval.run_blocks import (
    PIECE_BYTES,
    TREC_COLUMNS,
    keep_top,
    rankings_from_rows,
    read_any_whitespace,
    read_single_delimited,
)

if TYPE_CHECKING:
    import pyarrow as pa

RunFormat = Literal["trec", "jsonl"]


@dataclass(frozen=True)
class Rankings:
    """Each query's first `depth` documents, best first (every document when `depth` is None).

    One Arrow array of ids in query order and each query's span in it: far less memory than a list of
    strings per query, and a slice is cheap.
    """

    document_ids: pa.Array
    spans: Mapping[str, tuple[int, int]]
    depth: int | None
    checksum: str

    def __len__(self) -> int:
        return len(self.spans)

    def covers(self, limit: int) -> bool:
        return self.depth is None or limit <= self.depth

    def top(self, query_id: str, limit: int) -> list[str]:
        """A query the run does not hold retrieved nothing."""
        if not self.covers(limit):
            raise ValueError(f"these rankings hold {self.depth} documents per query, not {limit}")
        start, end = self.spans.get(query_id, (0, 0))
        return self.document_ids.slice(start, min(limit, end - start)).to_pylist()

    def table(self, query_ids: Sequence[str], limit: int) -> pa.ListArray:
        """`top` of every query at once, as one list per query id: cut from the run's array, never copied to Python."""
        import numpy as np

        if not self.covers(limit):
            raise ValueError(f"these rankings hold {self.depth} documents per query, not {limit}")
        spans = np.array([self.spans.get(query_id, (0, 0)) for query_id in query_ids], np.int64).reshape(-1, 2)
        lengths = np.minimum(spans[:, 1] - spans[:, 0], limit)
        offsets = np.concatenate(([0], np.cumsum(lengths)))
        rows = np.arange(offsets[-1]) - np.repeat(offsets[:-1] - spans[:, 0], lengths)
        return list_array(offsets, self.document_ids.take(indices(rows)))


def load_run(path: Path, format: RunFormat | None = None, *, key: str | None = None, depth: int | None = None) -> Rankings:
    """Without `format`, a name ending in `.jsonl` (before any `.gz`) is JSONL and anything else TREC.

    The checksum is of the bytes as stored, so recompressing a run is a new version and a touch is not.
    """
    if (format or ("jsonl" if path.name.removesuffix(".gz").endswith(".jsonl") else "trec")) == "jsonl":
        stored = _stored_bytes(path, key)
        document_ids, spans = _parse_jsonl(_decompressed(stored, path, key), str(path), key, depth)
        checksum = hashlib.sha256(stored).hexdigest()
    else:
        (document_ids, spans), checksum = _parse_trec(path, key, depth)
    if not spans:
        raise InvalidInputError("the run file holds no rankings", source=str(path), key=key)
    return Rankings(document_ids, spans, depth, checksum)


def _stored_bytes(path: Path, key: str | None) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise InvalidInputError(f"cannot read the run file ({error.strerror or error})", source=str(path), key=key) from None


def _decompressed(stored: bytes, path: Path, key: str | None) -> bytes:
    try:
        return gzip.decompress(stored) if path.name.endswith(".gz") else stored
    except (OSError, EOFError) as error:
        raise InvalidInputError(f"cannot read the run file ({error})", source=str(path), key=key) from None


class _Hashing:
    """A binary file that digests what is read from it, so the one read of a run also checksums it."""

    def __init__(self, handle: IO[bytes]):
        self._handle = handle
        self.digest = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        block = self._handle.read(size)
        self.digest.update(block)
        return block

    def hexdigest(self) -> str:
        """Of the whole file, even if what was parsed (a gzip member) ended before it."""
        while self.read(PIECE_BYTES):
            pass
        return self.digest.hexdigest()


def _pieces(text: IO[bytes]) -> Iterator[bytes]:
    """Whole lines, a few MiB at a time: Arrow parses each on every core while memory stays flat."""
    rest = b""
    while block := text.read(PIECE_BYTES):
        cut = block.rfind(b"\n") + 1
        if cut:
            yield b"".join((rest, memoryview(block)[:cut]))  # one copy of the block, not two
            rest = block[cut:]
        else:
            rest += block
    if rest:
        yield rest


def _parse_trec(path: Path, key: str | None, depth: int | None) -> tuple[tuple[pa.Array, dict[str, tuple[int, int]]], str]:
    try:
        with path.open("rb") as handle:
            hashing = _Hashing(handle)
            text = gzip.GzipFile(fileobj=hashing) if path.name.endswith(".gz") else hashing
            kept, delimiter = [], None
            for piece in _pieces(text):
                delimiter = delimiter or ("\t" if b"\t" in piece[: piece.find(b"\n")] else " ")
                kept += [keep_top(batch, depth) for batch in read_single_delimited(piece, delimiter).to_batches()]
            return rankings_from_rows(kept, depth), hashing.hexdigest()
    except (ValueError, OSError, EOFError):  # pyarrow.ArrowInvalid: not one space or tab between columns, or a bad line
        pass
    stored = _stored_bytes(path, key)
    data = _decompressed(stored, path, key)
    try:
        table = read_any_whitespace(data)
    except ValueError as error:
        raise _bad_trec_line(data, str(path), key, str(error)) from None
    return rankings_from_rows([keep_top(batch, depth) for batch in table.to_batches()], depth), hashlib.sha256(stored).hexdigest()


def _bad_trec_line(data: bytes, source: str, key: str | None, detail: str) -> InvalidInputError:
    """The slow path, taken only on error: find the first line a TREC reader would refuse."""
    not_text = utf8_problem(data, source, key)
    if not_text is not None:
        return not_text
    for number, line in enumerate(data.splitlines(), start=1):
        where = f"{source}:{number}"
        fields = line.decode("utf-8").split()
        if not fields:
            continue
        if len(fields) != len(TREC_COLUMNS):
            return InvalidInputError(
                f"expected 6 whitespace-separated columns (query id, Q0, document id, rank, score, tag), found {len(fields)}",
                source=where,
                key=key,
            )
        for column in ("rank", "score"):
            value = fields[TREC_COLUMNS.index(column)]
            if not _is_number(value):
                return InvalidInputError(f"the {column} {quoted(value)} is not a number", source=where, key=key)
    return InvalidInputError(f"cannot read the TREC run ({detail})", source=source, key=key)


def _is_number(text: str) -> bool:
    """NaN is refused: it has no place in a ranking, and trec_eval's order for it is undefined."""
    try:
        return not math.isnan(float(text))
    except ValueError:
        return False


def _parse_jsonl(data: bytes, source: str, key: str | None, depth: int | None) -> tuple[pa.Array, dict[str, tuple[int, int]]]:
    """JSONL runs are one line per query, so a plain loop is fast enough and names bad lines directly."""
    import pyarrow as pa

    document_ids: list[str] = []
    spans: dict[str, tuple[int, int]] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            record = json.loads(line)
        except UnicodeDecodeError:
            raise utf8_problem(data, source, key) from None
        except ValueError as error:
            raise InvalidInputError(f"invalid JSON ({error})", source=where, key=key) from None
        if not isinstance(record, dict):
            raise InvalidInputError('expected an object {"query_id": ..., "document_ids": [...]}', source=where, key=key)
        query_id = id_text(record.get("query_id"))
        if query_id is None:
            raise InvalidInputError("must be a non-empty string or an integer", source=where, key=key, field="query_id")
        if query_id in spans:
            raise InvalidInputError(f"query {quoted(query_id)} already has a ranking on an earlier line", source=where, key=key)
        ranking = record.get("document_ids")
        ids = [id_text(item) for item in ranking] if isinstance(ranking, list) else [None]
        if None in ids:
            raise InvalidInputError(
                "must be a list of document ids (strings or integers)", source=where, key=key, field="document_ids"
            )
        spans[query_id] = (len(document_ids), len(document_ids) + len(ids[:depth]))
        document_ids += ids[:depth]
    return from_python(document_ids, pa.string()), spans


def id_text(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None
