"""The `--json` documents: plain dicts of the core's values, one JSON object per command invocation."""

from __future__ import annotations

import dataclasses
import json
import sys
import uuid
from collections.abc import Iterator, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any

import click

from retrieval_pipeline.core.base.arrow_arrays import python_values
from retrieval_pipeline.core.scoring.change_breakdown import GroupDelta
from retrieval_pipeline.core.scoring.regression import RegressionReport
from retrieval_pipeline.core.scoring.results import GroupRates, RunResult
from retrieval_pipeline.core.scoring.set_versions import SetChanges
from retrieval_pipeline.core.scoring.slice_tests import SliceTest
from retrieval_pipeline.core.scoring.tolerances import Tolerances
from retrieval_pipeline.core.storage.store import StoredRun

if TYPE_CHECKING:  # the history's module is needed only to list a history
    from retrieval_pipeline.core.services.history import HistoryEntry


ROWS_PER_WRITE = 1000


def emit(document: dict[str, Any]) -> None:
    """Exactly one JSON object on stdout: indented for a person at a terminal, compact for a pipe,
    where Python's C encoder makes a 20,000-question document take a tenth of the time.

    A value given as an iterator (per-question rows) is written to a pipe a thousand rows at a time,
    so a large run is never held whole as row objects and text (~20 MiB for 20,000 questions).
    """
    streamed = {key: value for key, value in document.items() if isinstance(value, Iterator)}
    if sys.stdout.isatty():
        click.echo(_dumps({**document, **{key: list(rows) for key, rows in streamed.items()}}, indent=2))
        return
    markers = {key: f"\x00{uuid.uuid4().hex}" for key in streamed}
    rest = _dumps({**document, **markers})
    for key, rows in streamed.items():
        before, _, rest = rest.partition(_dumps(markers[key]))
        click.echo(before + "[", nl=False)
        separator = ""
        while chunk := list(islice(rows, ROWS_PER_WRITE)):
            click.echo(separator + _dumps(chunk)[1:-1], nl=False)
            separator = ","
        click.echo("]", nl=False)
    click.echo(rest)


def _dumps(value: Any, indent: int | None = None) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)


def breakdown(groups: dict[str, GroupRates], metrics: dict[str, dict[str, float]]) -> dict[str, dict[str, Any]]:
    return {
        key: {**rates.as_dict(), "intervals": _intervals(rates.intervals()), "metrics": metrics[key]}
        for key, rates in groups.items()
    }


def _intervals(intervals: dict[str, tuple[float, float]]) -> dict[str, list[float]]:
    return {name: list(bounds) for name, bounds in intervals.items()}


def questions(run: RunResult, positions: Sequence[int] | None = None) -> Iterator[dict[str, Any]]:
    """One row per question (those at `positions`, else all), read from the run's columns a column at a
    time: no object per question is built on the way."""
    columns = run.questions if positions is None else run.questions.take(positions)
    metrics = columns.metrics(run.cutoffs)
    names = list(metrics)
    rows = zip(
        *(
            columns.values(name)
            for name in ("question_id", "form", "hard_class", "expected_document_ids", "retrieved_document_ids")
        ),
        *(python_values(columns.hit_column(k)) for k in (1, 3)),
        zip(*(values.tolist() for values in metrics.values())),
        columns.values("latency_ms"),
        columns.values("error"),
    )
    for question_id, form, hard_class, expected, retrieved, top1, top3, scores, latency_ms, error in rows:
        yield {
            "id": question_id,
            "form": form,
            "hard_class": hard_class,
            "expected_document_ids": expected,  # tuples: JSON arrays all the same
            "retrieved_document_ids": retrieved,
            "top1_hit": top1,
            "top3_hit": top3,
            "metrics": None if error is not None else dict(zip(names, scores)),
            "latency_ms": latency_ms,
            "error": error,
        }


def run_summary(run: RunResult) -> dict[str, Any]:
    return {
        "set": run.set_identifier,
        "retriever": run.retriever_identifier,
        "grader": run.grader,
        "run_id": run.run_id,
        "run_at": run.run_at.isoformat(),
        "question_count": run.question_count,
        "top1_hit_count": run.top1_hit_count,
        "top1_hit_rate": run.top1_hit_rate,
        "top3_hit_count": run.top3_hit_count,
        "top3_hit_rate": run.top3_hit_rate,
        "hit_rates": {str(k): {"hit_count": run.hit_count(k), "hit_rate": run.hit_rate(k)} for k in run.cutoffs},
        "intervals": _intervals(run.intervals()),
        "metrics": run.metrics(),
        "by_form": breakdown(run.by_form(), run.metrics_by_form()),
        "by_hard_class": breakdown(run.by_hard_class(), run.metrics_by_hard_class()),
        "latency_mode": run.latency_mode,
        "latency_ms": run.latency_summary(),
        "complete": run.complete,
        "errored_question_ids": list(run.errored_question_ids),
        "index_version": run.index_version,
        "set_fingerprint": run.set_fingerprint,
    }


def group_deltas(deltas: Sequence[GroupDelta]) -> dict[str, dict[str, float | int]]:
    return {d.key: {"questions": d.questions, "top1_delta": d.top1_delta, "top3_delta": d.top3_delta} for d in deltas}


def set_changes(changes: SetChanges) -> dict[str, Any]:
    return {
        "added": list(changes.added),
        "removed": list(changes.removed),
        "relabelled": list(changes.relabelled),
        "compared": changes.compared,
        "matched_by": "labels" if changes.by_labels else "fingerprint",
    }


def regression(report: RegressionReport, tolerances: Tolerances) -> dict[str, Any]:
    return {
        "verdict": report.verdict.value,
        "has_baseline": report.has_baseline,
        "baseline_run_id": report.baseline_run_id,
        "top1_delta": report.top1_delta,
        "top3_delta": report.top3_delta,
        "is_regression": report.is_regression,
        "summary": report.summary,
        "flipped_to_miss": list(report.flipped_to_miss),
        "flipped_to_hit": list(report.flipped_to_hit),
        "by_form": group_deltas(report.by_form),
        "by_hard_class": group_deltas(report.by_hard_class),
        "top1_p_value": report.top1_p_value,
        "top3_p_value": report.top3_p_value,
        "is_inconclusive": report.is_inconclusive,
        "slice_tests": slice_tests(report.slice_tests, report.significance),
        "significance": report.significance,
        "minimum_detectable_drop": report.minimum_detectable_drop,
        "metric_deltas": dict(report.metric_deltas),
        "p95_latency_delta_ms": report.p95_latency_delta_ms,
        "excluded_unstable": list(report.excluded_unstable),
        "tolerances": dataclasses.asdict(tolerances),
    }


def slice_tests(tests: Sequence[SliceTest], significance: float) -> list[dict[str, Any]]:
    return [
        {
            "slice": t.slice,
            "key": t.key,
            "k": t.k,
            "questions": t.questions,
            "first_only_hits": t.first_only,
            "second_only_hits": t.second_only,
            "delta": t.delta,
            "p_value": t.p_value,
            "corrected_p_value": t.corrected_p_value,
            "survives_correction": t.survives(significance),
        }
        for t in tests
    ]


def evaluation(
    run: RunResult, report: RegressionReport, tolerances: Tolerances, store_uri: str, baseline_policy: str
) -> dict[str, Any]:
    """`set_changes` is there whenever a baseline was found, so a reader can tell what was compared."""
    document = {
        **run_summary(run),
        "store": store_uri,
        "questions": questions(run),
        "baseline_policy": baseline_policy,
        "regression": regression(report, tolerances),
    }
    if report.set_changes is not None:
        document["set_changes"] = set_changes(report.set_changes)
    return document


def history(entries: Sequence[HistoryEntry]) -> list[dict[str, Any]]:
    return [
        {
            "run_id": e.summary.run_id,
            "run_at": e.summary.run_at.isoformat(),
            "complete": e.summary.complete,
            "question_count": e.summary.question_count,
            "errored_count": e.summary.errored_count,
            "top1_hit_count": e.summary.hit_count(1),
            "top1_hit_rate": e.summary.hit_rate(1),
            "top3_hit_count": e.summary.hit_count(3),
            "top3_hit_rate": e.summary.hit_rate(3),
            "latency_mode": e.summary.latency_mode,
            "latency_p95_ms": e.summary.latency.get("p95"),
            "latency_batch_mean_ms": e.summary.latency.get("batch_mean"),
            "index_version": e.summary.index_version,
            "baseline_run_id": e.baseline_run_id,
            "top1_delta": e.deltas.get("top1"),
            "top3_delta": e.deltas.get("top3"),
            "verdict": e.summary.verdict,
            "status": e.status,
            "accepted": e.accepted,
            "accepted_by": e.acceptance.accepted_by if e.acceptance else None,
            "accepted_at": e.acceptance.accepted_at.isoformat() if e.acceptance else None,
            "is_baseline": e.is_baseline,
        }
        for e in entries
    ]


def stored_runs(runs: Sequence[StoredRun]) -> list[dict[str, Any]]:
    return [
        {
            "set": run.key.set_identifier,
            "retriever": run.key.retriever_identifier,
            "grader": run.key.grader,
            "run_id": run.run_id,
            "run_at": run.run_at.isoformat(),
            "complete": run.complete,
        }
        for run in runs
    ]
