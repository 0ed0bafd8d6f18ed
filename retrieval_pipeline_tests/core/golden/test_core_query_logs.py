"""Query logs in every accepted format read to the same distinct queries and counts; bad lines named."""

from __future__ import annotations

import csv
import gzip
import json
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
