"""Runs (a summary row, one row per question), question sets and acceptances as the Arrow tables stored.

A run's question file is its question columns (question_columns.py) with the run id and the hits
beside them. Hits are written for readers' convenience but rebuilt from the ids on reading
(stored_runs.py); the schemas are run_schema.py's.
"""

from __future__ import annotations

import json

from retrieval_pipeline.core.base.arrow_arrays import from_python, from_rows
from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.core.retrieval.latency import PERCENTILES
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.checks.verdicts import RegressionReport, Verdict
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.question_fields import FIELDS
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.slices import SLICES
from retrieval_pipeline.core.scoring.traffic import WeightedFigures
from retrieval_pipeline.core.scoring.turns import ConversationsHit, conversations_all_hit
from retrieval_pipeline.core.storage.run_schema import (
    CONVERSATION_COLUMNS,
    SCHEMA_VERSION,
    TRAFFIC_COLUMNS,
    question_file_schema,
    summary_schema,
)


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
    """The run's own figures, then its check (`_check_columns`) and the traffic it was weighted by (with
    `weighted`: the log's name and fingerprint, each question's traffic and the weighted figures)."""
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
        **{f"by_{declared.name}": _breakdown_rows(run.breakdown(declared.name)) for declared in SLICES},
        **{f"latency_p{p}_ms": latency.get(f"p{p}") for p in PERCENTILES},
        "latency_max_ms": latency.get("max"),
        "index_version": run.index_version,
        "latency_mode": run.latency_mode,
        "latency_batch_mean_ms": run.latency_summary().get("batch_mean"),
        "hit_rate_ci_low": [low for low, _ in intervals.values()],
        "hit_rate_ci_high": [high for _, high in intervals.values()],
        "metric_names": list(metrics),
        "metric_values": list(metrics.values()),
        **{f"by_{declared.name}_metrics": _group_metric_rows(run.group_metrics(declared.name)) for declared in SLICES},
        "set_fingerprint": run.set_fingerprint,
        **_check_columns(report, tolerances),
        "schema_version": SCHEMA_VERSION,
        "labels": run.labels,
        **_traffic_columns(weighted),
        "approximation": run.approximation.to_json() if run.approximation else None,
        "query_mode": run.query_mode,
        "retriever_setup": run.retriever_setup,
        **_conversation_columns(conversations_all_hit(run)),
    }
    return from_rows([row], summary_schema())


def _conversation_columns(conversations: ConversationsHit | None) -> dict:
    counts = (conversations.conversations, conversations.all_hit) if conversations else (None, None)
    return dict(zip(CONVERSATION_COLUMNS, counts))


def _check_columns(report: RegressionReport | None, tolerances: Tolerances | None) -> dict:
    """The check's verdict and sentence, baseline, how many questions it compared and the deltas it found
    on them, so the accepted-baseline policy and the history read them back without opening any
    per-question file. Without a check (a run saved outside an evaluation) they are null. The
    `tolerances` it was judged with (JSON) let a later report show that very verdict, not today's."""
    unjudged = (Verdict.BASELINE, Verdict.INCOMPLETE, Verdict.NOT_COMPARABLE)
    compared = report is not None and report.verdict not in unjudged
    return {
        "verdict": report.verdict.value if report else None,
        # what the check said, so a reader of the store (`report`, the leaderboard's check) quotes it, not a
        # rewording; an incomplete run's sentence quotes the retriever's error, hence scrubbed
        "verdict_summary": scrub(report.summary) if report else None,
        "tolerances": json.dumps(tolerances.as_dict()) if tolerances else None,
        "baseline_run_id": report.baseline_run_id if report else None,
        "compared_questions": report.set_changes.compared if report and report.set_changes else None,
        **{f"{figure.key}_delta": report.hit_rate_delta(figure.k) if compared else None for figure in TESTED},
        **_rescored_baseline_columns(report if compared else None),
    }


def _rescored_baseline_columns(report: RegressionReport | None) -> dict:
    """The baseline's tested rates its deltas were computed from (rescored under the run's labels) and as
    stored, when the check rescored it: what `history` sets beside a delta; null otherwise."""
    rescoring = report.rescored_baseline if report is not None else None
    runs = {"rescored": rescoring.rescored, "stored": rescoring.stored} if rescoring is not None else {}
    return {
        f"{figure.key}_baseline_{state}": runs[state].hit_rate(figure.k) if runs else None
        for state in ("rescored", "stored")
        for figure in TESTED
    }


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
        "conversation": questions.column("conversation"),
        "turn": questions.column("turn"),
        "query": questions.column("query"),
    }
    return pa.Table.from_arrays(list(columns.values()), schema=question_file_schema())


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
