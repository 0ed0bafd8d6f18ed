"""Query logs: what users actually asked, read as distinct queries with counts.

A log is streamed (CSV and JSONL line by line, Parquet a batch at a time; `.gz` too) and only the dict of
distinct normalised queries (and of each distinct raw text's cleaned form) is kept, so memory grows with
the distinct queries, never with the lines.
Logs hold personal data: each `redact` pattern is replaced by `[redacted]` as a line is read, before the
query is normalised, counted, shown or written anywhere. Each pattern is compiled on its own and applied
in the order written (each to the text the ones before it left), so one pattern's groups, group names or
inline flags never change another's meaning. A bad line is refused naming the file, the line
and the field (never its text) unless the log says `skip_bad_lines: true`; then it is counted. A count
is a whole number from 1 to MAX_COUNT, and a log's counts add up to MAX_COUNT at most: a line past
either is bad. A file that cannot be read on (a gzip or a Parquet page damaged in the middle) is refused
whole, naming the last line or row read.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from retrieval_pipeline.core.base.errors import InvalidInputError, one_line
from retrieval_pipeline.core.base.text_files import JSON_ERRORS, json_problem, text_lines

REDACTED = "[redacted]"
FORMATS = ("csv", "jsonl", "parquet", "ubi")
FORMATS_READ = "csv, jsonl (each also .gz), parquet, ubi (JSONL, also .gz)"
MAX_COUNT = 10**15
"""The largest count of one line, and of a whole log: more queries than any service logs in years, and
exact as a float (below 2**53), so no sum of counts, weights or shares overflows or rounds."""
_WHOLE = re.compile(r"[0-9]{1,16}")
_SUFFIX_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet"}
UBI_FIELDS = {"query": "user_query", "timestamp": "timestamp"}
"""An OpenSearch UBI `ubi_queries` document: one search per document, its text in `user_query`."""
_SPACES = re.compile(r"\s+")


class QueryLogSpec(BaseModel):
    """One `query_logs:` entry; `path` is resolved against the configuration's folder by the caller."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    path: str
    format: Literal["csv", "jsonl", "parquet", "ubi"] | None = None
    """None: from the suffix (.csv, .jsonl/.ndjson/.json, .parquet, each optionally .gz)."""
    query: str = "query"
    count: str | None = None
    """A field holding how many times the line's query was asked; without it each line counts once."""
    timestamp: str | None = None
    examples: bool = False
    """Whether example query texts may appear in reports, files and Dagster metadata (default: counts only)."""
    redact: tuple[str, ...] = ()
    skip_bad_lines: bool = False

    @field_validator("redact")
    @classmethod
    def _patterns(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for position, pattern in enumerate(patterns, start=1):
            try:
                re.compile(pattern)
            except re.error as error:  # shown as written in the file: a repr would double every backslash
                raise ValueError(f"pattern {position}, `{pattern}`, is not a regular expression: {error}") from None
        return patterns

    def log_format(self, path: Path) -> str:
        suffix = Path(path.name.removesuffix(".gz")).suffix
        if self.format is None and suffix not in _SUFFIX_FORMATS:
            raise InvalidInputError(
                f"cannot tell the log's format from {suffix or 'no suffix'}; name it with format: ({', '.join(FORMATS)})",
                source=str(path),
                field="format",
            )
        log_format = self.format or _SUFFIX_FORMATS[suffix]
        if log_format == "parquet" and path.name.endswith(".gz"):
            raise InvalidInputError(
                "a gzip-compressed Parquet file is not a format the query log reader reads (Parquet compresses its "
                f"own pages: write it as plain .parquet); the formats read: {FORMATS_READ}",
                source=str(path),
            )
        return log_format


@dataclass(frozen=True)
class QueryCounts:
    """A log's distinct normalised queries with how many times each was asked, and how reading went."""

    source: str
    counts: Mapping[str, int]
    lines: int
    bad_lines: int = 0
    blank_lines: int = 0
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    examples: bool = field(default=False)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def distinct(self) -> int:
        return len(self.counts)


def normalised(text: str) -> str:
    """Stripped, runs of whitespace collapsed to one space, case-folded: `Wing  Flutter ` is `wing flutter`."""
    return _SPACES.sub(" ", text).strip().casefold()


def read_query_log(spec: QueryLogSpec, path: Path) -> QueryCounts:
    """The log at `path` (resolved) counted by normalised query, redacted as each line is read."""
    path = Path(path)
    log_format = spec.log_format(path)
    if log_format == "ubi":
        spec = spec.model_copy(update=UBI_FIELDS)
    counter = _Counter(spec, [re.compile(pattern) for pattern in spec.redact])
    rows = {"csv": _csv_rows, "parquet": _parquet_rows}.get(log_format, _jsonl_rows)(path)
    for where, row in rows:
        counter.add(where, row)
    return QueryCounts(
        str(path),
        counter.counts,
        counter.lines,
        counter.bad,
        counter.blank,
        counter.first,
        counter.last,
        spec.examples,
    )


class _Counter:
    """The running counts of one read; a bad line raises, or is counted under `skip_bad_lines`."""

    def __init__(self, spec: QueryLogSpec, redactors: list[re.Pattern]):
        self.spec, self.redactors = spec, redactors
        self.counts: dict[str, int] = {}
        self.cleaned: dict[str, str] = {}
        self.lines = self.bad = self.blank = self.total = 0
        self.first: str | None = None
        self.last: str | None = None

    def add(self, where: str, row: Any) -> None:
        self.lines += 1
        try:
            query, count, timestamp = self._fields(where, row)
            if self.total + count > MAX_COUNT:
                raise InvalidInputError(
                    f"the log's counts add up to more than {MAX_COUNT:,} (10^15) with this line's",
                    source=where,
                    field=self.spec.count,
                )
        except InvalidInputError:
            if not self.spec.skip_bad_lines:
                raise
            self.bad += 1
            return
        query = self._clean(query)
        if not query:
            self.blank += 1
            return
        self.counts[query] = self.counts.get(query, 0) + count
        self.total += count
        if timestamp is not None:
            self.first = timestamp if self.first is None else min(self.first, timestamp)
            self.last = timestamp if self.last is None else max(self.last, timestamp)

    def _clean(self, raw: str) -> str:
        """Redacted and normalised once per distinct raw text: a log repeats its popular queries, and the
        patterns' scan is most of a line's cost."""
        clean = self.cleaned.get(raw)
        if clean is None:
            clean = raw
            for redactor in self.redactors:  # one at a time: joined, their groups and flags would mix
                clean = redactor.sub(REDACTED, clean)
            clean = normalised(clean)
            self.cleaned[raw] = clean
        return clean

    def _fields(self, where: str, row: Any) -> tuple[str, int, str | None]:
        spec = self.spec
        if isinstance(row, _Bad):
            raise InvalidInputError(row.reason, source=where)
        if not isinstance(row, Mapping):
            raise InvalidInputError("expected an object with the query's fields", source=where)
        query = row.get(spec.query)
        if not isinstance(query, str):
            problem = "is missing" if query is None else "must be text"
            raise InvalidInputError(problem, source=where, field=spec.query)
        count = 1 if spec.count is None else _count(row.get(spec.count), where, spec.count)
        timestamp = row.get(spec.timestamp) if spec.timestamp else None
        return query, count, None if timestamp is None else str(timestamp)


def _count(value: Any, where: str, name: str) -> int:
    """A whole number from 1 to MAX_COUNT, or its digits (a CSV cell): ASCII digits only, and never more
    than a count within the bound has, so no text of thousands of digits is converted."""
    if isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_COUNT:
        raise InvalidInputError(f"must be a whole number from 1 to {MAX_COUNT:,} (10^15)", source=where, field=name)
    return value


def _jsonl_rows(path: Path) -> Iterator[tuple[str, Any]]:
    """Each non-blank line as JSON; an OpenSearch export's hit (`_source`) is read as its document."""
    for number, line in text_lines(path, "query log"):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except JSON_ERRORS as error:  # bad syntax, nesting thousands deep, a number of thousands of digits
            yield where, _Bad(f"invalid JSON: {json_problem(error)}")
            continue
        yield where, row.get("_source", row) if isinstance(row, dict) else row


def _csv_rows(path: Path) -> Iterator[tuple[str, Any]]:
    """Rows as mappings of the header's names; a row with more or fewer cells than the header is bad."""
    lines = (line for _, line in text_lines(path, "query log"))
    reader = csv.reader(lines)
    header = next(reader, None) or []
    while True:
        try:
            cells = next(reader, None)
        except csv.Error as error:  # a cell past the csv module's field limit: the reader goes on at the next line
            yield f"{path}:{reader.line_num}", _Bad(f"invalid CSV: {one_line(str(error))}")
            continue
        if cells is None:
            return
        where = f"{path}:{reader.line_num}"
        if not cells:
            continue
        yield (
            where,
            dict(zip(header, cells))
            if len(cells) == len(header)
            else _Bad(f"{len(cells)} cells where the header has {len(header)}"),
        )


def _parquet_rows(path: Path) -> Iterator[tuple[str, Any]]:
    """A batch at a time; a row is named by its 1-based number (Parquet has no lines)."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except (OSError, ValueError) as error:
        raise InvalidInputError(f"cannot read the query log as Parquet ({error})", source=str(path)) from None
    number = 0
    batches = parquet.iter_batches(batch_size=65536)
    while True:
        try:
            batch = next(batches, None)
        except (OSError, ValueError) as error:  # a damaged page: pyarrow's OSError or ArrowInvalid (a ValueError)
            raise InvalidInputError(
                f"cannot read the query log as Parquet after row {number} (the file is damaged: {one_line(str(error))})",
                source=str(path),
            ) from None
        if batch is None:
            return
        for row in batch.to_pylist():
            number += 1
            yield f"{path}: row {number}", row


@dataclass(frozen=True)
class _Bad:
    """A line that could not be parsed at all: refused by `_Counter` as a bad line with its reason."""

    reason: str
