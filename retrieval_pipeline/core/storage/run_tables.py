"""Runs (a summary row, one row per question) and question sets as Arrow tables.

A run's question file is its question columns (question_columns.py) with the run id and the hits
beside them. Hits are written for readers' convenience but rebuilt from the ids on reading, so a stored
run and the run it came from are the same value.
"""

from __future__ import annotations

import functools
import json

from retrieval_pipeline.core.base.arrow_arrays import from_python, from_rows
from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.core.retrieval.approximation import Approximation
from retrieval_pipeline.core.retrieval.latency import PER_QUESTION, PERCENTILES
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.question_columns import FIELDS, QuestionColumns, question_schema
from retrieval_pipeline.core.scoring.regression import RegressionReport, Verdict
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.tolerances import Tolerances
from retrieval_pipeline.core.scoring.traffic import TrafficWeights, WeightedFigures
from retrieval_pipeline.core.storage.store_files import summary_row

RUN_COLUMNS_PER_QUESTION = (
    "set_identifier",
    "retriever_identifier",
    "run_at",
    "complete",
    "index_version",
    "set_fingerprint",
    "latency_mode",
)
"""Summary columns repeated on every question row of a run's value, when the stored summary has them:
the rows of several runs stay self-describing once concatenated."""


SCHEMA_VERSION = 3
"""The summary schema every run is written with. Version 1 is every summary written before the version
was (its columns grew over time: verdicts, fingerprints, intervals, ranking metrics, the latency mode);
version 3 adds the traffic a log assigned to each question and the weighted figures (null without one)."""

_NOT_RECORDED = {
    "latency_mode": PER_QUESTION,
    "labels": "human",
    "hit_rate_ci_low": [],
    "hit_rate_ci_high": [],
    "metric_names": [],
    "metric_values": [],
}
"""What a column an older summary lacks reads as; any other missing column reads as null."""


def upgraded(row: dict) -> dict:
    """A stored summary row as the current schema has it: the one place that knows older files exist.
    A column the row's version did not write reads as not recorded; the row keeps its own version."""
    missing = {name: _NOT_RECORDED.get(name) for name in _summary_columns() if row.get(name) is None}
    return {**row, **missing, "schema_version": row.get("schema_version") or 1}


@functools.cache
def _summary_columns() -> tuple[str, ...]:
    return tuple(_schemas()[0].names)


def _schemas():
    import pyarrow as pa

    breakdown = pa.list_(
        pa.struct(
            [("key", pa.string()), ("questions", pa.int64()), ("top1_hit_rate", pa.float64()), ("top3_hit_rate", pa.float64())]
        )
    )
    group_metrics = pa.list_(pa.struct([("key", pa.string()), ("metric", pa.string()), ("value", pa.float64())]))
    summary = pa.schema(
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
            ("by_form", breakdown),
            ("by_hard_class", breakdown),
            *[(f"latency_p{p}_ms", pa.float64()) for p in PERCENTILES],
            ("latency_max_ms", pa.float64()),
            ("index_version", pa.string()),
            ("latency_mode", pa.string()),
            ("latency_batch_mean_ms", pa.float64()),
            ("hit_rate_ci_low", pa.list_(pa.float64())),
            ("hit_rate_ci_high", pa.list_(pa.float64())),
            ("metric_names", pa.list_(pa.string())),
            ("metric_values", pa.list_(pa.float64())),
            ("by_form_metrics", group_metrics),
            ("by_hard_class_metrics", group_metrics),
            ("set_fingerprint", pa.string()),
            ("verdict", pa.string()),
            ("verdict_summary", pa.string()),
            ("tolerances", pa.string()),
            ("baseline_run_id", pa.string()),
            ("compared_questions", pa.int64()),
            ("top1_delta", pa.float64()),
            ("top3_delta", pa.float64()),
            ("schema_version", pa.int64()),
            ("labels", pa.string()),
            ("traffic_log", pa.string()),
            ("traffic_fingerprint", pa.string()),
            ("traffic_question_ids", pa.list_(pa.string())),
            ("traffic_counts", pa.list_(pa.int64())),
            ("weighted_names", pa.list_(pa.string())),
            ("weighted_values", pa.list_(pa.float64())),
            ("weighted_ci_low", pa.list_(pa.float64())),
            ("weighted_ci_high", pa.list_(pa.float64())),
            ("approximation", pa.string()),
        ]
    )
    questions = pa.schema(
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
        ]
    )
    return summary, questions


def _breakdown_rows(groups) -> list[dict]:
    return [{"key": key, **rates.as_dict()} for key, rates in groups.items()]


def _group_metric_rows(groups: dict[str, dict[str, float]]) -> list[dict]:
    """One row per (key, metric): long form, so any reader can pivot it."""
    return [{"key": key, "metric": name, "value": value} for key, metrics in groups.items() for name, value in metrics.items()]


def summary_table(
    run: RunResult,
    report: RegressionReport | None = None,
    tolerances: Tolerances | None = None,
    weighted: WeightedFigures | None = None,
):
    """With the run's check (`report`): its verdict and sentence, baseline, how many questions it compared
    and the deltas it found on them, so the accepted-baseline policy and the history read them back without
    opening any per-question file. Without one (a run saved outside an evaluation) they are null. The
    `tolerances` it was judged with (JSON) let a later report show that very verdict, not today's. With
    `weighted`, the traffic each question weighed (the log's name and fingerprint) and the weighted figures."""

    unjudged = (Verdict.BASELINE, Verdict.INCOMPLETE, Verdict.NOT_COMPARABLE)
    compared = report is not None and report.verdict not in unjudged

    latency = run.latency_percentiles()
    intervals = run.intervals()
    metrics = run.metrics()
    row = {
        "set_identifier": run.set_identifier,
        "retriever_identifier": run.retriever_identifier,
        "grader": run.grader,
        "run_id": run.run_id,
        "run_at": run.run_at,
        "complete": run.complete,
        "question_count": run.question_count,
        "errored_count": len(run.errored_question_ids),
        **{
            column: value
            for figure in TESTED
            for column, value in ((f"{figure.key}_hit_count", run.hit_count(figure.k)), (figure.column, run.hit_rate(figure.k)))
        },
        "pass_rate": run.hit_rate(TESTED[0].k),  # the generic model's names (see EvaluationSummary)
        "mean_score": run.hit_rate(TESTED[-1].k),
        "cutoffs": list(run.cutoffs),
        "hit_rates": [run.hit_rate(k) for k in run.cutoffs],
        "by_form": _breakdown_rows(run.by_form()),
        "by_hard_class": _breakdown_rows(run.by_hard_class()),
        **{f"latency_p{p}_ms": latency.get(f"p{p}") for p in PERCENTILES},
        "latency_max_ms": latency.get("max"),
        "index_version": run.index_version,
        "latency_mode": run.latency_mode,
        "latency_batch_mean_ms": run.latency_summary().get("batch_mean"),
        "hit_rate_ci_low": [low for low, _ in intervals.values()],
        "hit_rate_ci_high": [high for _, high in intervals.values()],
        "metric_names": list(metrics),
        "metric_values": list(metrics.values()),
        "by_form_metrics": _group_metric_rows(run.metrics_by_form()),
        "by_hard_class_metrics": _group_metric_rows(run.metrics_by_hard_class()),
        "set_fingerprint": run.set_fingerprint,
        "verdict": report.verdict.value if report else None,
        # what the check said, so a reader of the store (`report`, the leaderboard's check) quotes it, not a
        # rewording; an incomplete run's sentence quotes the retriever's error, hence scrubbed
        "verdict_summary": scrub(report.summary) if report else None,
        "tolerances": json.dumps(tolerances.as_dict()) if tolerances else None,
        "baseline_run_id": report.baseline_run_id if report else None,
        "compared_questions": report.set_changes.compared if report and report.set_changes else None,
        **{f"{figure.key}_delta": report.hit_rate_delta(figure.k) if compared else None for figure in TESTED},
        "schema_version": SCHEMA_VERSION,
        "labels": run.labels,
        **_traffic_columns(weighted),
        "approximation": run.approximation.to_json() if run.approximation else None,
    }
    return from_rows([row], _schemas()[0])


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


def _traffic_columns(weighted: WeightedFigures | None) -> dict:
    """Only what traffic-weighted figures need: the counts by question (never a logged query), and the
    figures, keyed like the plain ones, with the hit rates' intervals in their order."""
    if weighted is None:
        return dict.fromkeys(TRAFFIC_COLUMNS)
    counts = weighted.traffic.counts
    return {
        "traffic_log": weighted.traffic.log,
        "traffic_fingerprint": weighted.traffic.fingerprint,
        "traffic_question_ids": list(counts),
        "traffic_counts": list(counts.values()),
        "weighted_names": list(weighted.values),
        "weighted_values": list(weighted.values.values()),
        "weighted_ci_low": [low for low, _ in weighted.intervals.values()],
        "weighted_ci_high": [high for _, high in weighted.intervals.values()],
    }


def recorded_traffic(row: dict) -> TrafficWeights | None:
    """The traffic a stored run was weighted by; None for a run saved without (or before) one."""
    if row.get("traffic_log") is None:
        return None
    counts = dict(zip(row["traffic_question_ids"], row["traffic_counts"]))
    return TrafficWeights(row["traffic_log"], counts, row["traffic_fingerprint"])


def incomplete_summary(summary, reason: str):
    """A complete run's summary marked incomplete, its verdict `incomplete` with `reason` for sentence."""
    import pyarrow as pa

    marks = (
        ("complete", False, pa.bool_()),
        ("verdict", Verdict.INCOMPLETE.value, pa.string()),
        ("verdict_summary", reason, pa.string()),
    )
    for name, value, kind in marks:
        column = pa.array([value], kind)
        index = summary.schema.get_field_index(name)
        summary = summary.set_column(index, name, column) if index >= 0 else summary.append_column(name, column)
    return summary


def recorded_tolerances(row: dict) -> Tolerances | None:
    """The tolerances a stored run was judged with; None for a run saved without them (before they were
    recorded, or outside an evaluation)."""
    return Tolerances(**json.loads(row["tolerances"])) if row.get("tolerances") else None


def question_table(run: RunResult):
    """The run's question columns as they are, the run id first and the hits after the ids."""
    import pyarrow as pa

    questions = run.questions
    errors = questions.column("error")
    if errors.null_count < len(errors):  # scrubbed whoever built the run
        errors = from_python([None if error is None else scrub(error) for error in errors.to_pylist()], pa.string())
    columns = {
        "run_id": pa.repeat(from_python([run.run_id], pa.string())[0], len(questions)),
        **{name: questions.column(name) for name in FIELDS[:5]},
        **{f"{figure.key}_hit": questions.hit_column(figure.k) for figure in TESTED},
        "latency_ms": questions.column("latency_ms"),
        "error": errors,
        "question_fingerprint": questions.column("fingerprint"),
        "rejected_document_ids": questions.column("rejected_document_ids"),
        "machine_judged_document_ids": questions.column("machine_judged_document_ids"),
    }
    return pa.Table.from_arrays(list(columns.values()), schema=_schemas()[1])


def question_set_table(question_set):
    import pyarrow as pa

    questions = question_set.questions
    text, ids = pa.string(), pa.list_(pa.string())
    columns = {
        "set_identifier": ([question_set.identifier] * len(questions), text),
        "question_id": ([q.id for q in questions], text),
        "question": ([q.question for q in questions], text),
        "form": ([q.form.value for q in questions], text),
        "hard_class": ([q.hard_class for q in questions], text),
        "expected_document_ids": ([q.expected_document_ids for q in questions], ids),
        "rejected_document_ids": ([q.rejected_document_ids for q in questions], ids),
        "answer_gist": ([q.answer_gist for q in questions], text),
    }
    return pa.table({name: from_python(values, type) for name, (values, type) in columns.items()})


def acceptance_table(acceptance):
    """One explicit acceptance (see baselines.py) as its own one-row file."""
    import pyarrow as pa

    key = acceptance.key
    schema = pa.schema(
        [
            *((name, pa.string()) for name in ("set_identifier", "retriever_identifier", "grader", "run_id")),
            ("accepted_at", pa.timestamp("us", tz="UTC")),
            ("accepted_by", pa.string()),
        ]
    )
    row = {
        "set_identifier": key.set_identifier,
        "retriever_identifier": key.retriever_identifier,
        "grader": key.grader,
        "run_id": acceptance.run_id,
        "accepted_at": acceptance.accepted_at,
        "accepted_by": acceptance.accepted_by,
    }
    return from_rows([row], schema)


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
        questions=QuestionColumns(pa.Table.from_arrays(columns, schema=schema)),
    )


def _stored_column(questions, field):
    """A missing column is a foreign file (KeyError), except the fingerprints, rejected and machine-judged
    ids older runs lack (none recorded: no fingerprint, nothing rejected, nothing machine-judged)."""
    import pyarrow as pa

    name = "question_fingerprint" if field.name == "fingerprint" else field.name
    if name == "question_fingerprint" and name not in questions.column_names:
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
