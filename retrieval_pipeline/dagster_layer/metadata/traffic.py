"""The metadata of a query log counted and of a set's coverage of it: counts and shares, and query text only
where the log's entry says `examples: true` (the counts hold examples only then, and so does the view)."""

from __future__ import annotations

from typing import Any

from retrieval_pipeline.core.golden.query_logs import QueryCounts
from retrieval_pipeline.core.services.views.coverage_view import CoverageView
from retrieval_pipeline.dagster_layer.metadata.values import Column, Markdown, plotted, table

MOST_ASKED = 10
MOST_ASKED_COLUMNS = (Column("query", "string"), Column("count", "int"))
CLUSTER_COLUMNS = (Column("rank", "int"), Column("traffic", "int"), Column("share", "float"), Column("distinct", "int"))


def query_log_metadata(counts: QueryCounts) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "distinct_queries": counts.distinct,
        "total_count": counts.total,
        "lines_read": counts.lines,
        "bad_lines": counts.bad_lines,
        "blank_lines": counts.blank_lines,
        "first_timestamp": counts.first_timestamp or "",
        "last_timestamp": counts.last_timestamp or "",
    }
    if counts.examples:
        top = sorted(counts.counts.items(), key=lambda item: -item[1])[:MOST_ASKED]
        metadata["most_asked"] = table(MOST_ASKED_COLUMNS, ({"query": q, "count": c} for q, c in top))
    return metadata


def coverage_metadata(view: CoverageView, history_chart: str) -> dict[str, Any]:
    """`history_chart`: the covered share's history as Markdown (an image), drawn above the core."""
    columns = CLUSTER_COLUMNS + ((Column("examples", "string"),) if view.examples else ())
    clusters = (
        {"rank": c.rank, "traffic": c.traffic, "share": round(c.share or 0.0, 4), "distinct": c.distinct}
        | ({"examples": " | ".join(c.examples)} if view.examples else {})
        for c in view.clusters
    )
    return {
        "covered_share": plotted(view.covered_share or 0.0),
        "covered_distinct_share": plotted(view.distinct_share or 0.0),
        "covered_traffic": view.covered,
        "total_traffic": view.total,
        "uncovered_clusters": len(view.clusters),
        "match_share": "unknown" if view.match_share is None else plotted(view.match_share),
        "method": view.method,
        "threshold": plotted(view.threshold),
        "questions_without_traffic": len(view.unassigned_questions),
        "history_chart": Markdown(history_chart),
        "uncovered_by_cluster": table(columns, clusters),
    }
