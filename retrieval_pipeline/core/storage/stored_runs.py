"""Stored runs read back: a run's value from its two tables, the tolerances and traffic it was judged
and weighted with, and the one table a dataframe user reads.

The question file's hits are rebuilt from the ids on reading, so a stored run and the run it came from
are the same value.
"""

from __future__ import annotations

import json

from retrieval_pipeline.core.base.arrow_arrays import from_python
from retrieval_pipeline.core.retrieval.approximation import Approximation
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.question_columns import QuestionColumns
from retrieval_pipeline.core.scoring.question_fields import question_schema
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.traffic import TrafficWeights
from retrieval_pipeline.core.storage.run_schema import upgraded
from retrieval_pipeline.core.storage.store_files import summary_row

RUN_COLUMNS_PER_QUESTION = (
    "set_identifier",
    "retriever_identifier",
    "run_at",
    "complete",
    "index_version",
    "set_fingerprint",
    "latency_mode",
    "query_mode",
)
"""Summary columns repeated on every question row of a run's value, when the stored summary has them:
the rows of several runs stay self-describing once concatenated."""


def recorded_traffic(row: dict) -> TrafficWeights | None:
    """The traffic a stored run was weighted by; None for a run saved without (or before) one."""
    if row.get("traffic_log") is None:
        return None
    counts = dict(zip(row["traffic_question_ids"], row["traffic_counts"]))
    return TrafficWeights(row["traffic_log"], counts, row["traffic_fingerprint"])


def recorded_tolerances(row: dict) -> Tolerances | None:
    """The tolerances a stored run was judged with; None for a run saved without them (before they were
    recorded, or outside an evaluation)."""
    return Tolerances(**json.loads(row["tolerances"])) if row.get("tolerances") else None


def run_from_tables(summary, questions) -> RunResult:
    """The question file's columns become the run's, untouched; a run stored before question fingerprints
    existed reads back with none (see set_versions.py)."""
    import pyarrow as pa

    row = upgraded(summary_row(summary))
    schema = question_schema()
    columns = [_stored_column(questions, field) for field in schema]
    return RunResult(
        set_identifier=row["set_identifier"],
        retriever_identifier=row["retriever_identifier"],
        grader=row["grader"],
        run_id=row["run_id"],
        run_at=row["run_at"],
        cutoffs=tuple(row["cutoffs"]),
        index_version=row["index_version"],
        latency_mode=row["latency_mode"],
        labels=row["labels"],
        approximation=Approximation.from_json(row["approximation"]),
        query_mode=row["query_mode"],
        retriever_setup=row["retriever_setup"],
        questions=QuestionColumns(pa.Table.from_arrays(columns, schema=schema)),
    )


def _stored_column(questions, field):
    """A missing column is a foreign file (KeyError), except the fingerprints, rejected and machine-judged
    ids, the turns and the queries older runs lack (none recorded: no fingerprint, nothing rejected, nothing
    machine-judged, no conversation, every question asked as typed)."""
    import pyarrow as pa

    name = "question_fingerprint" if field.name == "fingerprint" else field.name
    if name in ("question_fingerprint", "conversation", "turn", "query") and name not in questions.column_names:
        return pa.nulls(questions.num_rows, field.type)
    if name in ("rejected_document_ids", "machine_judged_document_ids") and name not in questions.column_names:
        return from_python([[]] * questions.num_rows, field.type)
    return questions.column(name).cast(field.type)


def run_value_table(summary, questions):
    """A stored run as one table a dataframe user reads directly: every column of the stored question
    table, the run's identity from its summary on every row, and a hit column for every cut-off the
    run was scored at, in cut-off order (the question file keeps top-1 and top-3 only; all are rebuilt
    from the ids, as `run_from_tables` does, so they agree with the run's rates)."""
    import pyarrow as pa

    run = run_from_tables(summary, questions)
    names = [f"top{k}_hit" for k in run.cutoffs]
    position = questions.column_names.index(names[0])
    table = questions.drop_columns([name for name in names if name in questions.column_names])
    for offset, (name, k) in enumerate(zip(names, run.cutoffs)):
        table = table.add_column(position + offset, pa.field(name, pa.bool_()), run.questions.hit_column(k))
    carried = [name for name in RUN_COLUMNS_PER_QUESTION if name in summary.column_names]
    for position, name in enumerate(carried):
        table = table.add_column(position, summary.schema.field(name), pa.repeat(summary.column(name)[0], table.num_rows))
    return table
