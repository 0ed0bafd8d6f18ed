"""The `--json` documents: the views laid out as plain dicts, one JSON object per command invocation."""

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
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.set_versions import SetChanges
from retrieval_pipeline.core.scoring.tolerances import Tolerances
from retrieval_pipeline.core.storage.store import StoredRun

if TYPE_CHECKING:  # the history's and the views' modules are needed only by the documents that show them
    from retrieval_pipeline.core.services.history import HistoryEntry
    from retrieval_pipeline.core.services.views.breakdowns import Breakdown
    from retrieval_pipeline.core.services.views.evaluation_view import EvaluationView
    from retrieval_pipeline.core.services.views.figure_rows import FigureRow
    from retrieval_pipeline.core.services.views.run_view import RunView
    from retrieval_pipeline.core.services.views.slice_rows import SliceTests


ROWS_PER_WRITE = 1000


def emit(document: dict[str, Any]) -> None:
    """Exactly one JSON object on stdout: indented for a person at a terminal, compact for a pipe,
    where Python's C encoder writes a large document many times faster.

    A value given as an iterator (per-question rows) is written to a pipe a thousand rows at a time,
    so a large run is never held whole as row objects and text.
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


def breakdown(view: Breakdown) -> dict[str, dict[str, Any]]:
    return {
        row.key: {
            "questions": row.questions,
            **{f"{cell.key}_hit_rate": cell.value for cell in row.rates},
            "intervals": {cell.key: list(cell.interval) for cell in row.rates},
            "metrics": {cell.key: cell.value for cell in row.scores},
        }
        for row in view.rows
    }


def questions(run: RunResult, positions: Sequence[int] | None = None) -> Iterator[dict[str, Any]]:
    """One row per question (those at `positions`, else all), read from the run's columns a column at a
    time: no object per question is built on the way. `unjudged_document_ids` are the ids in its top D
    (the deepest cut-off) that are neither expected nor rejected: what to judge before trusting a miss."""
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
        columns.values("rejected_document_ids"),
        columns.unjudged_ids(run.cutoffs[-1]),
    )
    for question_id, form, hard_class, expected, retrieved, top1, top3, scores, latency_ms, error, rejected, unjudged in rows:
        yield {
            "id": question_id,
            "form": form,
            "hard_class": hard_class,
            "expected_document_ids": expected,  # tuples: JSON arrays all the same
            "retrieved_document_ids": retrieved,
            "rejected_document_ids": rejected,
            "unjudged_document_ids": unjudged,
            "top1_hit": top1,
            "top3_hit": top3,
            "metrics": None if error is not None else dict(zip(names, scores)),
            "latency_ms": latency_ms,
            "error": error,
        }


def run_summary(view: RunView) -> dict[str, Any]:
    run = view.result
    return {
        "set": run.set_identifier,
        "retriever": run.retriever_identifier,
        "grader": run.grader,
        "run_id": run.run_id,
        "run_at": run.run_at.isoformat(),
        "question_count": run.question_count,
        **{name: value for row in view.tested for name, value in _counted(row)},
        "hit_rates": {str(row.figure.k): {"hit_count": row.count, "hit_rate": row.value} for row in view.rates},
        "intervals": {row.key: list(row.interval) for row in view.rates},
        "metrics": {row.key: row.value for row in view.ranking},
        **{f"by_{b.name}": breakdown(b) for b in (view.by_form, view.by_hard_class)},
        "latency_mode": run.latency_mode,
        "latency_ms": {row.statistic: row.value for row in view.latency},
        "complete": run.complete,
        "errored_question_ids": list(run.errored_question_ids),
        "index_version": run.index_version,
        "set_fingerprint": run.set_fingerprint,
    }


def _counted(row: FigureRow) -> tuple[tuple[str, Any], ...]:
    return (f"{row.key}_hit_count", row.count), (f"{row.key}_hit_rate", row.value)


def group_changes(view: Breakdown) -> dict[str, dict[str, float | int]]:
    return {
        change.key: {"questions": change.questions, **{f"{d.figure.key}_delta": d.delta for d in change.deltas}}
        for change in view.changes
    }


def set_changes(changes: SetChanges) -> dict[str, Any]:
    return {
        "added": list(changes.added),
        "removed": list(changes.removed),
        "relabelled": list(changes.relabelled),
        "rescored": list(changes.rescored),
        "not_rescored": changes.not_rescored,
        "not_rescored_questions": [
            {"question_id": question_id, "reason": reason} for question_id, reason in changes.not_rescored_questions
        ],
        "compared": changes.compared,
        "matched_by": "labels" if changes.by_labels else "fingerprint",
    }


def regression(view: EvaluationView, tolerances: Tolerances) -> dict[str, Any]:
    verdict, tested = view.verdict, view.run.tested
    return {
        "verdict": verdict.status,
        "has_baseline": verdict.has_baseline,
        "baseline_run_id": verdict.baseline_run_id,
        **{f"{row.key}_delta": row.checked for row in tested},
        "is_regression": verdict.is_regression,
        "summary": verdict.sentence,
        "flipped_to_miss": list(view.flipped_to_miss),
        "flipped_to_hit": list(view.flipped_to_hit),
        "unjudged_lost_hits": list(view.unjudged_lost_hits),
        **{f"by_{b.name}": group_changes(b) for b in (view.run.by_form, view.run.by_hard_class)},
        **{f"{row.key}_p_value": row.p_value for row in tested},
        "is_inconclusive": verdict.is_inconclusive,
        "slice_tests": slice_tests(view.slice_tests),
        "significance": view.slice_tests.significance,
        "minimum_detectable_drop": view.minimum_detectable_drop,
        "metric_deltas": {row.key: row.checked for row in view.run.ranking_changes},
        "p95_latency_delta_ms": view.latency_change,
        "excluded_unstable": list(view.excluded_unstable),
        "tolerances": dataclasses.asdict(tolerances),
    }


def slice_tests(tests: SliceTests) -> list[dict[str, Any]]:
    return [
        {
            "slice": row.test.slice,
            "key": row.test.key,
            "measure": row.figure.key,
            "k": row.test.k,
            "test": row.test_name,
            "questions": row.test.questions,
            "first_only_hits": row.test.first_only,
            "second_only_hits": row.test.second_only,
            "delta": row.test.delta,
            "delta_interval": None if row.test.interval is None else list(row.test.interval),
            "p_value": row.test.p_value,
            "corrected_p_value": row.test.corrected_p_value,
            "survives_correction": row.survives,
        }
        for row in tests.rows
    ]


def evaluation(view: EvaluationView, tolerances: Tolerances, store_uri: str, baseline_policy: str) -> dict[str, Any]:
    """`set_changes` is there whenever a baseline was found, so a reader can tell what was compared."""
    document = {
        **run_summary(view.run),
        "store": store_uri,
        "questions": questions(view.run.result),
        "baseline_policy": baseline_policy,
        "regression": regression(view, tolerances),
    }
    if view.set_changes is not None:
        document["set_changes"] = set_changes(view.set_changes)
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
            "rescored_questions": None if e.rescored is None else list(e.rescored),
            "not_rescored": e.not_rescored,
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
