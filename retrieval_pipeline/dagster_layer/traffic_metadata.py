"""The metadata of the `query_log` and `coverage` assets: counts and shares; query text only where the
log's entry says `examples: true` (the view leaves examples out otherwise, and so does this)."""

from __future__ import annotations

from typing import Any

from dagster import MetadataValue, TableColumn, TableRecord, TableSchema

from retrieval_pipeline.core.golden.query_logs import QueryCounts
from retrieval_pipeline.core.services.views.coverage_view import CoverageView

MOST_ASKED = 10


def query_log_metadata(counts: QueryCounts) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "distinct_queries": MetadataValue.int(counts.distinct),
        "total_count": MetadataValue.int(counts.total),
        "lines_read": MetadataValue.int(counts.lines),
        "bad_lines": MetadataValue.int(counts.bad_lines),
        "blank_lines": MetadataValue.int(counts.blank_lines),
        "first_timestamp": MetadataValue.text(counts.first_timestamp or ""),
        "last_timestamp": MetadataValue.text(counts.last_timestamp or ""),
    }
    if counts.examples:
        top = sorted(counts.counts.items(), key=lambda item: -item[1])[:MOST_ASKED]
        schema = TableSchema(columns=[TableColumn("query", "string"), TableColumn("count", "int")])
        metadata["most_asked"] = MetadataValue.table([TableRecord({"query": q, "count": c}) for q, c in top], schema=schema)
    return metadata


def coverage_metadata(view: CoverageView, history_chart: str) -> dict[str, Any]:
    columns = [
        TableColumn("rank", "int"),
        TableColumn("traffic", "int"),
        TableColumn("share", "float"),
        TableColumn("distinct", "int"),
    ]
    if view.examples:
        columns.append(TableColumn("examples", "string"))
    clusters = [
        TableRecord(
            {"rank": c.rank, "traffic": c.traffic, "share": round(c.share or 0.0, 4), "distinct": c.distinct}
            | ({"examples": " | ".join(c.examples)} if view.examples else {})
        )
        for c in view.clusters
    ]
    return {
        "covered_share": MetadataValue.float(view.covered_share or 0.0),
        "covered_distinct_share": MetadataValue.float(view.distinct_share or 0.0),
        "covered_traffic": MetadataValue.int(view.covered),
        "total_traffic": MetadataValue.int(view.total),
        "uncovered_clusters": MetadataValue.int(len(view.clusters)),
        "match_share": MetadataValue.float(view.match_share) if view.match_share is not None else MetadataValue.text("unknown"),
        "method": MetadataValue.text(view.method),
        "threshold": MetadataValue.float(view.threshold),
        "questions_without_traffic": MetadataValue.int(len(view.unassigned_questions)),
        "history_chart": MetadataValue.md(history_chart),
        "uncovered_by_cluster": MetadataValue.table(clusters, schema=TableSchema(columns=columns)),
    }
