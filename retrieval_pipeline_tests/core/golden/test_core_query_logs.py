"""Query logs in every accepted format read to the same distinct queries and counts; bad lines named."""

from __future__ import annotations

import csv
import gzip
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.query_logs import QueryLogSpec, normalised, read_query_log

# Cranfield queries (public), with a repeat that differs only by case and spacing.
LINES = [
    ("what similarity laws must be obeyed when constructing aeroelastic models", 3, "2026-01-02T10:00:00"),
    ("What  similarity laws must be obeyed when constructing AEROELASTIC models ", 2, "2026-01-01T09:00:00"),
    ("how can the aerodynamic performance of channel flow ground effect machines be calculated", 1, "2026-01-03T08:00:00"),
]
EXPECTED = {normalised(LINES[0][0]): 5, normalised(LINES[2][0]): 1}


def _jsonl(path: Path, rows: list[dict]) -> Path:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
    return path


def _rows() -> list[dict]:
    return [{"q": text, "n": count, "at": at} for text, count, at in LINES]


def test_csv_jsonl_gz_and_parquet_logs_count_the_same_normalised_queries(tmp_path):
    csv_path = tmp_path / "log.csv"
    with csv_path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, ["q", "n", "at"])
        writer.writeheader()
        writer.writerows(_rows())
    parquet = tmp_path / "log.parquet"
    pq.write_table(pa.Table.from_pylist(_rows()), parquet)
    spec = QueryLogSpec(path="-", query="q", count="n", timestamp="at")
    for path in (csv_path, _jsonl(tmp_path / "log.jsonl.gz", _rows()), parquet):
        counts = read_query_log(spec, path)
        assert dict(counts.counts) == EXPECTED
        assert (counts.lines, counts.total, counts.distinct) == (3, 6, 2)
        assert (counts.first_timestamp, counts.last_timestamp) == ("2026-01-01T09:00:00", "2026-01-03T08:00:00")


def test_an_opensearch_ubi_export_counts_each_search_once(tmp_path):
    documents = [
        {"query_id": f"q{i}", "client_id": "c1", "timestamp": at, "user_query": text, "query": "{...}"}
        for i, (text, _, at) in enumerate(LINES)
    ]
    hits = [{"_index": "ubi_queries", "_id": d["query_id"], "_source": d} for d in documents[:2]] + documents[2:]
    counts = read_query_log(QueryLogSpec(path="-", format="ubi"), _jsonl(tmp_path / "ubi_queries.ndjson", hits))
    assert dict(counts.counts) == {normalised(LINES[0][0]): 2, normalised(LINES[2][0]): 1}


@pytest.mark.parametrize(
    "line, field, problem",
    [
        ("{not json", None, "invalid JSON"),
        ('{"other": "x"}', "query", "is missing"),
        ('{"query": 7}', "query", "must be text"),
        ('{"query": "lift", "count": -2}', "count", "whole number"),
        ('["lift"]', None, "expected an object"),
    ],
)
def test_a_bad_line_is_refused_naming_the_file_the_line_and_the_field(tmp_path, line, field, problem):
    path = tmp_path / "log.jsonl"
    path.write_text('{"query": "lift", "count": 1}\n\n' + line + "\n")
    with pytest.raises(InvalidInputError) as caught:
        read_query_log(QueryLogSpec(path="-", count="count"), path)
    assert caught.value.source == f"{path}:3"
    assert caught.value.field == field
    assert problem in str(caught.value)


def test_a_csv_row_with_a_missing_cell_is_named_by_its_line(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("query,count\nlift,2\ndrag\n")
    with pytest.raises(InvalidInputError, match=r"log.csv:3: 1 cells where the header has 2"):
        read_query_log(QueryLogSpec(path="-", count="count"), path)


def test_skip_bad_lines_counts_them_and_keeps_the_good_ones(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"query": "lift"}\n{oops\n{"query": "  "}\n{"query": "LIFT"}\n')
    counts = read_query_log(QueryLogSpec(path="-", skip_bad_lines=True), path)
    assert dict(counts.counts) == {"lift": 2}
    assert (counts.lines, counts.bad_lines, counts.blank_lines) == (4, 1, 1)


def test_redaction_replaces_every_match_before_the_query_is_counted(tmp_path):
    path = _jsonl(
        tmp_path / "log.jsonl", [{"query": "refund for bob@example.org order 12345"}, {"query": "refund for ann@example.com"}]
    )
    spec = QueryLogSpec(path="-", redact=(r"[\w.]+@[\w.]+", r"\d{5}"))
    counts = read_query_log(spec, path)
    assert dict(counts.counts) == {"refund for [redacted] order [redacted]": 1, "refund for [redacted]": 1}


def test_a_log_whose_format_cannot_be_told_is_refused_naming_the_format_key(tmp_path):
    path = tmp_path / "log.txt"
    path.write_text("lift\n")
    with pytest.raises(InvalidInputError, match="format") as caught:
        read_query_log(QueryLogSpec(path="-"), path)
    assert caught.value.field == "format"


def test_a_bad_redact_pattern_is_named_by_position_as_written_with_its_backslashes_single():
    with pytest.raises(ValueError) as caught:
        QueryLogSpec(path="-", redact=(r"\b\d{6,}\b", r"([\w.+-]+@[\w-]+"))
    reason = caught.value.errors()[0]["msg"]  # what the configuration error shows, after the field
    assert reason.startswith(r"Value error, pattern 2, `([\w.+-]+@[\w-]+`, is not a regular expression: missing ),")


def test_a_backreference_in_a_later_redact_pattern_refers_to_its_own_group_and_hides_what_it_matches(tmp_path):
    # The first pattern has a group of its own: joined into one expression, the second's \1 named it.
    path = _jsonl(tmp_path / "log.jsonl", [{"query": "call 555-1234 about 'secret-abc123' please"}])
    spec = QueryLogSpec(path="-", redact=(r"(\d{3})-\d{4}", r"(['\"])secret-\w+\1"))
    counts = read_query_log(spec, path)
    assert dict(counts.counts) == {"call [redacted] about [redacted] please": 1}


@pytest.mark.parametrize(
    "patterns",
    [
        (r"\d{5}", r"(?i)BOB@EXAMPLE\.ORG"),
        (r"(?P<id>\d{5})", r"(?P<id>bob)@example\.org"),
        (r"(?x) \d{5}  # an order", r"bob@\S+"),
    ],
    ids=["inline-flag", "group-name-in-both", "verbose-flag"],
)
def test_redact_patterns_each_valid_alone_are_applied_together_without_changing_each_other(tmp_path, patterns):
    path = _jsonl(tmp_path / "log.jsonl", [{"query": "refund for bob@example.org order 12345"}])
    spec = QueryLogSpec(path="-", redact=patterns)
    counts = read_query_log(spec, path)
    assert dict(counts.counts) == {"refund for [redacted] order [redacted]": 1}


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "line", [DEEP, '{"query": "lift", "extra": ' + DEEP + "}", '{"query": "lift", "count": ' + "9" * 5000 + "}"]
)
def test_json_nested_thousands_deep_or_a_number_too_long_to_read_is_a_bad_line(tmp_path, line):
    path = tmp_path / "log.jsonl"
    path.write_text('{"query": "lift", "count": 1}\n' + line + "\n" + '{"query": "drag", "count": 1}\n')
    with pytest.raises(InvalidInputError, match="invalid JSON") as caught:
        read_query_log(QueryLogSpec(path="-", count="count"), path)
    assert caught.value.source == f"{path}:2"
    counts = read_query_log(QueryLogSpec(path="-", count="count", skip_bad_lines=True), path)
    assert dict(counts.counts) == {"lift": 1, "drag": 1}
    assert (counts.lines, counts.bad_lines) == (3, 1)


@pytest.mark.parametrize(
    "count",
    [str(10**20), "1e20", "9" * 5000, "²", str(2**63 - 1)],
    ids=["1e20-whole", "1e20", "5000-digits", "superscript-digit", "int64-max"],
)
def test_a_count_that_is_not_a_whole_number_within_the_bound_is_a_bad_line_naming_its_line(tmp_path, count):
    path = tmp_path / "log.csv"
    path.write_text(f"query,count\nlift,2\nlift,{count}\ndrag,3\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="must be a whole number from 1 to 1,000,000,000,000,000") as caught:
        read_query_log(QueryLogSpec(path="-", count="count"), path)
    assert (caught.value.source, caught.value.field) == (f"{path}:3", "count")
    skipped = read_query_log(QueryLogSpec(path="-", count="count", skip_bad_lines=True), path)
    assert (dict(skipped.counts), skipped.bad_lines) == ({"lift": 2, "drag": 3}, 1)


def test_counts_each_within_the_bound_adding_up_past_it_make_the_line_that_passes_it_bad(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text("".join(f'{{"query": "q{n}", "count": {6 * 10**14}}}\n' for n in range(3)))
    with pytest.raises(InvalidInputError, match="add up to more than 1,000,000,000,000,000") as caught:
        read_query_log(QueryLogSpec(path="-", count="count"), path)
    assert caught.value.source == f"{path}:2"
    skipped = read_query_log(QueryLogSpec(path="-", count="count", skip_bad_lines=True), path)
    assert skipped.total <= 10**15 and skipped.bad_lines == 2


def test_a_csv_cell_larger_than_the_csv_reader_takes_is_a_bad_line(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("query,count\nlift,1\n" + "x" * 200_000 + ",1\ndrag,1\n")
    with pytest.raises(InvalidInputError, match="field larger than field limit") as caught:
        read_query_log(QueryLogSpec(path="-", count="count"), path)
    assert caught.value.source == f"{path}:3"
    counts = read_query_log(QueryLogSpec(path="-", count="count", skip_bad_lines=True), path)
    assert dict(counts.counts) == {"lift": 1, "drag": 1} and counts.bad_lines == 1


@pytest.mark.parametrize("named", [None, "parquet"])
def test_a_gzipped_parquet_log_is_refused_naming_the_formats_read(tmp_path, named):
    buffer = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist([{"query": "lift"}]), buffer)
    path = tmp_path / "log.parquet.gz"
    path.write_bytes(gzip.compress(buffer.getvalue().to_pybytes()))
    with pytest.raises(InvalidInputError) as caught:
        read_query_log(QueryLogSpec(path="-", format=named), path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "gzip-compressed Parquet" in message
    assert "csv, jsonl (each also .gz), parquet" in message


LOG_TEXT = "".join(json.dumps({"query": f"query {n} about the flutter of wing {n * 7}"}) + "\n" for n in range(20_000))


def _overwritten(path: Path) -> Path:
    """Compressed bytes overwritten in the middle, as a bad disk block would: the data decompresses to
    garbage and the checksum at the end fails (BadGzipFile)."""
    data = bytearray(gzip.compress(LOG_TEXT.encode(), mtime=0))
    middle = len(data) // 2
    data[middle : middle + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    return path


def _stored_block_broken(path: Path) -> Path:
    """The length of a stored (uncompressed) deflate block in the middle broken: zlib.error."""
    data = bytearray(gzip.compress(LOG_TEXT.encode(), compresslevel=0, mtime=0))
    second_block = 10 + 5 + 65535  # the gzip header, then the first block's header and its bytes
    data[second_block + 1 : second_block + 5] = bytes(4)
    path.write_bytes(bytes(data))
    return path


def _cut_short(path: Path) -> Path:
    """A copy stopped halfway: EOFError."""
    data = gzip.compress(LOG_TEXT.encode(), mtime=0)
    path.write_bytes(data[: len(data) // 2])
    return path


@pytest.mark.parametrize(
    "damage", [_overwritten, _stored_block_broken, _cut_short], ids=["overwritten", "zlib-error", "cut-short"]
)
def test_a_gzip_log_damaged_in_the_middle_is_refused_naming_the_file_and_the_line_reached(tmp_path, damage):
    path = damage(tmp_path / "log.jsonl.gz")
    with pytest.raises(InvalidInputError) as caught:
        read_query_log(QueryLogSpec(path="-", skip_bad_lines=True), path)
    assert caught.value.source == str(path)
    assert "the file is damaged or cut short" in caught.value.problem
    reached = int(re.search(r"after line (\d+)", caught.value.problem).group(1))
    assert 0 < reached <= 20_000


def test_a_parquet_log_with_a_damaged_data_page_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "log.parquet"
    rows = [{"query": f"query {n} about the flutter of wing {n * 7}"} for n in range(50_000)]
    pq.write_table(pa.Table.from_pylist(rows), path, compression="snappy", row_group_size=10_000)
    data = bytearray(path.read_bytes())
    start = len(data) // 2
    data[start : start + 256] = bytes(b ^ 0x5A for b in data[start : start + 256])
    path.write_bytes(bytes(data))
    with pytest.raises(InvalidInputError) as caught:
        read_query_log(QueryLogSpec(path="-"), path)
    assert caught.value.source == str(path) and "the file is damaged" in caught.value.problem
