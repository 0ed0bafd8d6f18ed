"""Replay rankings another system produced, so a pipeline this project cannot call can still be measured.

A team dumps its system's rankings once (a TREC run `qid Q0 docid rank score tag`, or JSONL
`{"query_id": ..., "document_ids": [...]}`) and evaluates that file like any live retriever. The golden
set asks by question text while a run is keyed by query id, so the text is mapped to its id through a
question set (named, or every configured one) or a BEIR `queries.jsonl`.

Order in a TREC run follows trec_eval, which ir_measures (through pytrec_eval) uses: the rank column is
ignored and documents sort by score descending, ties by document id descending in byte order. Any
other order would make our top-k hit rates differ from the Success@k every IR tool reports for the
same file.

Multi-million-line runs load in one vectorised pass (pyarrow's multi-threaded CSV reader, one Arrow sort,
run-length grouping), never a Python loop per line; only a malformed file is re-read line by line, to
name the first bad line.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from retrieval_pipeline.core.errors import InvalidInputError, UnknownIdentifierError
from retrieval_pipeline.core.retriever import BuildContext, RetrieverFault, RetrieverParams, document_id_from_chunk

if TYPE_CHECKING:
    import pyarrow as pa

RunFormat = Literal["trec", "jsonl"]
TREC_COLUMNS = ("query_id", "iteration", "document_id", "rank", "score", "tag")
TREC_ORDER = [("query", "ascending"), ("score", "descending"), ("document_id", "descending")]


class Rankings:
    """Every query's full ranking, best first: one id array in query order and each query's span in it.

    One Arrow array rather than a Python list per query keeps millions of ids compact and quick to build.
    """

    def __init__(self, document_ids: pa.Array, spans: dict[str, tuple[int, int]], checksum: str):
        self._document_ids = document_ids
        self._spans = spans
        self.checksum = checksum

    def __len__(self) -> int:
        return len(self._spans)

    def top(self, query_id: str, limit: int) -> list[str]:
        """The first `limit` ids; a query the run does not hold retrieved nothing."""
        start, end = self._spans.get(query_id, (0, 0))
        return self._document_ids.slice(start, min(limit, end - start)).to_pylist()


def load_run(path: Path, format: RunFormat | None = None, *, key: str | None = None) -> Rankings:
    """Parse the file once, checksum its bytes as stored. `.gz` files are decompressed.

    Without `format`, a name ending in `.jsonl` (before any `.gz`) is JSONL and anything else TREC.
    """
    checksum = _checksum(path, key)
    name = path.name.removesuffix(".gz")
    if (format or ("jsonl" if name.endswith(".jsonl") else "trec")) == "jsonl":
        document_ids, spans = _parse_jsonl(_contents(path, key), str(path), key)
    else:
        document_ids, spans = _parse_trec(path, key)
    if not spans:
        raise InvalidInputError("the run file holds no rankings", source=str(path), key=key)
    return Rankings(document_ids, spans, checksum)


def _checksum(path: Path, key: str | None) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        raise InvalidInputError(f"cannot read the run file ({error.strerror or error})", source=str(path), key=key) from None
    return digest.hexdigest()


def _contents(path: Path, key: str | None) -> bytes:
    """The whole file, decompressed: for JSONL runs (one line per query) and to locate a bad TREC line."""
    try:
        return gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    except (OSError, EOFError) as error:
        raise InvalidInputError(f"cannot read the run file ({error})", source=str(path), key=key) from None


def _parse_trec(path: Path, key: str | None) -> tuple[pa.Array, dict[str, tuple[int, int]]]:
    """Query ids are dictionary-encoded before the sort, so millions of lines sort on small integers."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        table = _read_single_delimited(path)
    except (ValueError, OSError):  # pyarrow.ArrowInvalid: not one space or tab between columns, or a bad line
        data = _contents(path, key)
        try:
            table = _read_any_whitespace(data)
        except ValueError as error:
            raise _bad_trec_line(data, str(path), key, str(error)) from None
    queries = table.column("query_id")
    queries = (queries if pa.types.is_dictionary(queries.type) else pc.dictionary_encode(queries)).unify_dictionaries()
    queries = queries.combine_chunks()
    keyed = pa.table({"query": queries.indices, "score": table.column("score"), "document_id": table.column("document_id")})
    del table
    order = pc.sort_indices(keyed, sort_keys=TREC_ORDER)
    groups = pc.run_end_encode(keyed.column("query").take(order).combine_chunks())
    ends = groups.run_ends.to_pylist()
    names = queries.dictionary.take(groups.values).to_pylist()
    return keyed.column("document_id").take(order).combine_chunks(), dict(zip(names, zip([0, *ends[:-1]], ends)))


def _read_single_delimited(path: Path) -> pa.Table:
    """The common case and the fast one: columns separated by exactly one space (or one tab) on every line.

    Read straight from the file (compressed or not), with the repeated columns dictionary-encoded, which
    keeps the peak memory of a multi-million-line run near the size of its text.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv

    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        first_line = handle.readline()
    label = pa.dictionary(pa.int32(), pa.string())  # Q0 and the tag repeat on every line: stored once
    types = {"query_id": pa.string(), "iteration": label, "document_id": pa.string(), "rank": pa.float64(), "score": pa.float64(), "tag": label}
    delimiter = "\t" if b"\t" in first_line else " "
    table = csv.read_csv(
        str(path),
        read_options=csv.ReadOptions(column_names=TREC_COLUMNS),
        parse_options=csv.ParseOptions(delimiter=delimiter, quote_char=False),
        convert_options=csv.ConvertOptions(column_types=types, null_values=[], strings_can_be_null=False),
    )
    # An empty field is a doubled or trailing delimiter, and a field holding the other kind of blank
    # hides one: either way a whitespace split, as trec_eval does, would see other columns.
    other_blank = " " if delimiter == "\t" else "\t"
    ids = [table.column("query_id"), table.column("document_id")]
    labels = [chunk.dictionary for name in ("iteration", "tag") for chunk in table.column(name).chunks]
    if (
        any(pc.any(pc.equal(column, "")).as_py() or pc.any(pc.match_substring(column, other_blank)).as_py() for column in ids)
        or any(pc.any(pc.match_substring_regex(label, r"^$|\s")).as_py() for label in labels)
    ):
        raise ValueError("an empty field or whitespace inside a field")
    return table


def _read_any_whitespace(data: bytes) -> pa.Table:
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
    fields = pc.utf8_split_whitespace(lines.filter(pc.not_equal(lines, "")))  # whitespace-only lines are blank
    if not pc.all(pc.equal(pc.list_value_length(fields), len(TREC_COLUMNS))).as_py():
        raise ValueError(f"a line does not have {len(TREC_COLUMNS)} columns")
    return pa.table(
        {
            "query_id": pc.list_element(fields, 0),
            "document_id": pc.list_element(fields, 2),
            "rank": pc.cast(pc.list_element(fields, 3), pa.float64()),
            "score": pc.cast(pc.list_element(fields, 4), pa.float64()),
        }
    )


def _bad_trec_line(data: bytes, source: str, key: str | None, detail: str) -> InvalidInputError:
    """The slow path, taken only on error: find the first line a TREC reader would refuse."""
    for number, line in enumerate(data.splitlines(), start=1):
        where = f"{source}:{number}"
        try:
            fields = line.decode("utf-8").split()
        except UnicodeDecodeError:
            return InvalidInputError("the line is not UTF-8 text", source=where, key=key)
        if not fields:
            continue
        if len(fields) != len(TREC_COLUMNS):
            return InvalidInputError(
                "expected 6 whitespace-separated columns (query id, Q0, document id, rank, score, tag), "
                f"found {len(fields)}",
                source=where,
                key=key,
            )
        for column in ("rank", "score"):
            value = fields[TREC_COLUMNS.index(column)]
            try:
                float(value)
            except ValueError:
                return InvalidInputError(f"the {column} {value!r} is not a number", source=where, key=key)
    return InvalidInputError(f"cannot read the TREC run ({detail})", source=source, key=key)


def _parse_jsonl(data: bytes, source: str, key: str | None) -> tuple[pa.Array, dict[str, tuple[int, int]]]:
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
        except ValueError as error:
            raise InvalidInputError(f"invalid JSON ({error})", source=where, key=key) from None
        if not isinstance(record, dict):
            raise InvalidInputError('expected an object {"query_id": ..., "document_ids": [...]}', source=where, key=key)
        query_id = _id_text(record.get("query_id"))
        if query_id is None:
            raise InvalidInputError("must be a non-empty string or an integer", source=where, key=key, field="query_id")
        if query_id in spans:
            raise InvalidInputError(f"query {query_id!r} already has a ranking on an earlier line", source=where, key=key)
        ranking = record.get("document_ids")
        ids = [_id_text(item) for item in ranking] if isinstance(ranking, list) else [None]
        if None in ids:
            raise InvalidInputError(
                "must be a list of document ids (strings or integers)", source=where, key=key, field="document_ids"
            )
        spans[query_id] = (len(document_ids), len(document_ids) + len(ids))
        document_ids.extend(ids)
    return pa.array(document_ids, type=pa.string()), spans


def _id_text(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


class UnresolvableQuestion(RetrieverFault):
    """The question text maps to no query id, or to several: asking again cannot change that."""


class RunFileParams(RetrieverParams):
    path: str = Field(min_length=1)
    format: RunFormat | None = None
    question_set: str | None = None
    queries: str | None = None
    chunk_separator: str | None = Field(None, min_length=1)


class RunFileRetriever:
    """Answers a question with the run's ranking for that question's query id, best first."""

    def __init__(
        self,
        identifier: str,
        rankings: Rankings,
        query_ids: Mapping[str, Mapping[str, str]],
        texts_from: str,
        chunk_separator: str | None = None,
    ):
        self.identifier = identifier
        self._rankings = rankings
        self._query_ids = query_ids
        self._texts_from = texts_from
        self._chunk_separator = chunk_separator

    @classmethod
    def from_config(cls, identifier: str, params: Mapping[str, Any], context: BuildContext) -> RunFileRetriever:
        """The run is loaded here, so a bad file stops the configuration instead of failing every question."""
        parsed = RunFileParams.parse(identifier, params, context)
        key = f"retrievers.{identifier}"
        if parsed.question_set is not None and parsed.queries is not None:
            raise InvalidInputError(
                "give question_set or queries, not both: they are two sources of query ids",
                source=context.source,
                key=key,
                field="queries",
            )
        rankings = load_run(context.resolve(parsed.path), parsed.format, key=key)
        pairs, texts_from = _text_id_pairs(parsed, context, key)
        query_ids: dict[str, dict[str, str]] = {}
        for text, query_id, origin in pairs:
            query_ids.setdefault(text.strip(), {}).setdefault(query_id, origin)
        return cls(identifier, rankings, query_ids, texts_from, parsed.chunk_separator)

    def index_version(self) -> str:
        """The checksum of the bytes loaded: a new export of the run is a new version, a touch is not."""
        return f"sha256:{self._rankings.checksum}"

    def retrieve(self, question: str, limit: int) -> list[str]:
        ranking = self._rankings.top(self._query_id(question), limit)
        if self._chunk_separator is None:
            return ranking
        return [document_id_from_chunk(chunk_id, self._chunk_separator) for chunk_id in ranking]

    def retrieve_batch(self, questions: Sequence[str], limit: int) -> list[list[str]]:
        return [self.retrieve(question, limit) for question in questions]

    def _query_id(self, question: str) -> str:
        candidates = self._query_ids.get(question.strip())
        if not candidates:
            raise UnresolvableQuestion(f"the question {question!r} is not in {self._texts_from}, so its query id is unknown")
        if len(candidates) > 1:
            listing = ", ".join(f"query {query_id!r} in {origin}" for query_id, origin in candidates.items())
            raise UnresolvableQuestion(
                f"the question {question!r} is ambiguous: it is {listing}; set question_set or queries to pick one"
            )
        return next(iter(candidates))


def _text_id_pairs(
    parsed: RunFileParams, context: BuildContext, key: str
) -> tuple[Iterable[tuple[str, str, str]], str]:
    """(question text, query id, where it comes from) from the queries file, the named set or every set."""
    if parsed.queries is not None:
        from retrieval_pipeline.core.beir import read_jsonl

        path = context.resolve(parsed.queries)
        pairs = []
        for number, record in read_jsonl(path):
            query_id, text = _id_text(record.get("_id")), record.get("text")
            if query_id is None or not isinstance(text, str):
                raise InvalidInputError('expected {"_id": ..., "text": ...}', source=f"{path}:{number}", key=key)
            pairs.append((text, query_id, str(path)))
        return pairs, str(path)
    if context.load_question_sets is None:
        raise InvalidInputError(
            "question texts need query ids: set question_set or queries (no question sets are configured)",
            source=context.source,
            key=key,
            field="question_set",
        )
    registry = context.load_question_sets()
    if parsed.question_set is None:
        sets, texts_from = list(registry.values()), "any configured question set"
    else:
        try:
            sets = [registry[parsed.question_set]]
        except UnknownIdentifierError as error:
            raise InvalidInputError(str(error), source=context.source, key=key, field="question_set") from None
        texts_from = f"the question set '{parsed.question_set}'"
    return [(q.question, q.id, f"set '{s.identifier}'") for s in sets for q in s.questions], texts_from
