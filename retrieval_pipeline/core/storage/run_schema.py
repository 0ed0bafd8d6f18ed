"""The stored run's columns: the summary's and the question file's schemas, and the schema version.

`upgraded` is the one place that knows older summaries exist: everything else reads a stored row as
the current schema has it.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from retrieval_pipeline.core.retrieval.latency import PER_QUESTION, PERCENTILES
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.slices import SLICES, TURN_DEPTH

if TYPE_CHECKING:
    import pyarrow as pa

SCHEMA_VERSION = 5
"""The summary schema every run is written with. Version 1 is every summary written before the version
was (its columns grew over time: verdicts, fingerprints, intervals, ranking metrics, the latency mode);
version 3 adds the traffic a log assigned to each question and the weighted figures (null without one);
version 4 the baseline's tested hit rates rescored and as stored, when the check rescored its baseline
(`RESCORED_BASELINE_COLUMNS`, null otherwise); version 5 the breakdown by turn depth (empty without turns)
and the conversations' counts (`CONVERSATION_COLUMNS`, null without turns)."""

_NOT_RECORDED = {
    "latency_mode": PER_QUESTION,
    "labels": "human",
    "query_mode": "current",
    "hit_rate_ci_low": [],
    "hit_rate_ci_high": [],
    "metric_names": [],
    "metric_values": [],
    f"by_{TURN_DEPTH.name}": [],
    f"by_{TURN_DEPTH.name}_metrics": [],
}
"""What a column an older summary lacks reads as; any other missing column reads as null."""


TRAFFIC_COLUMNS = (
    "traffic_log",
    "traffic_fingerprint",
    "traffic_question_ids",
    "traffic_counts",
    "weighted_names",
    "weighted_values",
    "weighted_ci_low",
    "weighted_ci_high",
)
"""Null in the summary of a run weighted by no traffic log (and of every run stored before version 3)."""


RESCORED_BASELINE_COLUMNS = tuple(f"{figure.key}_baseline_{state}" for state in ("rescored", "stored") for figure in TESTED)
"""The baseline's top-1 and top-3 hit rates under the labels the run was checked with (what its deltas
were computed from) and as stored with the baseline; null unless the check rescored its baseline."""


CONVERSATION_COLUMNS = ("conversation_count", "conversations_all_hit_count")
"""A run of conversations: how many it held, and how many had every turn hit in the top 3
(turns.conversations_all_hit); null in a run without turns (and every run stored before them)."""


def upgraded(row: dict) -> dict:
    """A stored summary row as the current schema has it: the one place that knows older files exist.
    A column the row's version did not write reads as not recorded; the row keeps its own version."""
    missing = {name: _NOT_RECORDED.get(name) for name in summary_schema().names if row.get(name) is None}
    return {**row, **missing, "schema_version": row.get("schema_version") or 1}


@functools.cache
def summary_schema() -> pa.Schema:
    """One row per run: its identity, figures, breakdowns, latency, check and traffic, in stored order."""
    import pyarrow as pa

    breakdown = pa.list_(
        pa.struct(
            [("key", pa.string()), ("questions", pa.int64()), ("top1_hit_rate", pa.float64()), ("top3_hit_rate", pa.float64())]
        )
    )
    group_metrics = pa.list_(pa.struct([("key", pa.string()), ("metric", pa.string()), ("value", pa.float64())]))
    return pa.schema(
        [
            ("set_identifier", pa.string()),
            ("retriever_identifier", pa.string()),
            ("grader", pa.string()),
            ("run_id", pa.string()),
            ("run_at", pa.timestamp("us", tz="UTC")),
            ("complete", pa.bool_()),
            ("question_count", pa.int64()),
            ("errored_count", pa.int64()),
            ("top1_hit_count", pa.int64()),
            ("top1_hit_rate", pa.float64()),
            ("top3_hit_count", pa.int64()),
            ("top3_hit_rate", pa.float64()),
            ("pass_rate", pa.float64()),
            ("mean_score", pa.float64()),
            ("cutoffs", pa.list_(pa.int64())),
            ("hit_rates", pa.list_(pa.float64())),
            *[(f"by_{declared.name}", breakdown) for declared in SLICES],
            *[(f"latency_p{p}_ms", pa.float64()) for p in PERCENTILES],
            ("latency_max_ms", pa.float64()),
            ("index_version", pa.string()),
            ("latency_mode", pa.string()),
            ("latency_batch_mean_ms", pa.float64()),
            ("hit_rate_ci_low", pa.list_(pa.float64())),
            ("hit_rate_ci_high", pa.list_(pa.float64())),
            ("metric_names", pa.list_(pa.string())),
            ("metric_values", pa.list_(pa.float64())),
            *[(f"by_{declared.name}_metrics", group_metrics) for declared in SLICES],
            ("set_fingerprint", pa.string()),
            ("verdict", pa.string()),
            ("verdict_summary", pa.string()),
            ("tolerances", pa.string()),
            ("baseline_run_id", pa.string()),
            ("compared_questions", pa.int64()),
            ("top1_delta", pa.float64()),
            ("top3_delta", pa.float64()),
            *[(name, pa.float64()) for name in RESCORED_BASELINE_COLUMNS],
            ("schema_version", pa.int64()),
            ("labels", pa.string()),
            *_traffic_fields(),
            ("approximation", pa.string()),
            ("query_mode", pa.string()),
            ("retriever_setup", pa.string()),
            *[(name, pa.int64()) for name in CONVERSATION_COLUMNS],
        ]
    )


def _traffic_fields() -> list[tuple[str, pa.DataType]]:
    import pyarrow as pa

    texts, floats = pa.list_(pa.string()), pa.list_(pa.float64())
    types = (pa.string(), pa.string(), texts, pa.list_(pa.int64()), texts, floats, floats, floats)
    return list(zip(TRAFFIC_COLUMNS, types))


@functools.cache
def question_file_schema() -> pa.Schema:
    """One row per question: the run's question columns with the run id first and the hits after the ids."""
    import pyarrow as pa

    return pa.schema(
        [
            ("run_id", pa.string()),
            ("question_id", pa.string()),
            ("form", pa.string()),
            ("hard_class", pa.string()),
            ("expected_document_ids", pa.list_(pa.string())),
            ("retrieved_document_ids", pa.list_(pa.string())),
            ("top1_hit", pa.bool_()),
            ("top3_hit", pa.bool_()),
            ("latency_ms", pa.float64()),
            ("error", pa.string()),
            ("question_fingerprint", pa.string()),
            ("rejected_document_ids", pa.list_(pa.string())),
            ("machine_judged_document_ids", pa.list_(pa.string())),
            ("conversation", pa.string()),
            ("turn", pa.int64()),
            ("query", pa.string()),
        ]
    )
