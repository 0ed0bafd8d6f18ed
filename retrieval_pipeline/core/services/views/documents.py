"""The parts the JSON documents share, as plain dicts: a run's summary and breakdowns, its baseline's
figures, set changes and slice tests, laid out once for `run --json`, `compare --json` and `history --json`.
Every key is pinned (scripts and CI read them); the figures come from the view's rows, so a declared
measure is a key here with no other edit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from retrieval_pipeline.core.scoring.set_versions import SetChanges
from retrieval_pipeline.core.services.views.turns_view import conversations_document

if TYPE_CHECKING:
    from retrieval_pipeline.core.services.views.breakdowns import Breakdown
    from retrieval_pipeline.core.services.views.figure_rows import FigureRow
    from retrieval_pipeline.core.services.views.run_view import RunView
    from retrieval_pipeline.core.services.views.slice_rows import SliceTests


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


def run_summary(view: RunView) -> dict[str, Any]:
    run = view.result
    return {
        "set": run.set_identifier,
        "retriever": run.retriever_identifier,
        "grader": run.grader,
        "labels": run.labels,
        "query_mode": run.query_mode,
        "run_id": run.run_id,
        "run_at": run.run_at.isoformat(),
        "question_count": run.question_count,
        **{name: value for row in view.tested for name, value in _counted(row)},
        "hit_rates": {str(row.figure.k): {"hit_count": row.count, "hit_rate": row.value} for row in view.rates},
        "intervals": {row.key: list(row.interval) for row in view.rates},
        "metrics": {row.key: row.value for row in view.ranking},
        **{f"by_{b.name}": breakdown(b) for b in view.listed},
        **conversations_document(view.conversations),
        "latency_mode": run.latency_mode,
        "latency_ms": {row.statistic: row.value for row in view.latency},
        "complete": run.complete,
        "errored_question_ids": list(run.errored_question_ids),
        "index_version": run.index_version,
        "set_fingerprint": run.set_fingerprint,
        # only where the search was approximate: an exact run's document keeps the keys it always had
        **({"approximate": run.approximation.to_dict()} if run.approximation else {}),
    }


def _counted(row: FigureRow) -> tuple[tuple[str, Any], ...]:
    return (f"{row.key}_hit_count", row.count), (f"{row.key}_hit_rate", row.value)


def group_changes(view: Breakdown) -> dict[str, dict[str, float | int]]:
    return {
        change.key: {"questions": change.questions, **{f"{d.figure.key}_delta": d.delta for d in change.deltas}}
        for change in view.changes
    }


def not_rescored_questions(questions: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    """(question id, why) pairs as every JSON document names them: a check's and each run of `history --rescore`."""
    return [{"question_id": question_id, "reason": reason} for question_id, reason in questions]


def set_changes(changes: SetChanges) -> dict[str, Any]:
    return {
        "added": list(changes.added),
        "removed": list(changes.removed),
        "relabelled": list(changes.relabelled),
        "rescored": list(changes.rescored),
        "not_rescored": changes.not_rescored,
        "not_rescored_questions": not_rescored_questions(changes.not_rescored_questions),
        "compared": changes.compared,
        "matched_by": "labels" if changes.by_labels else "fingerprint",
    }


def baseline_figures(view: RunView) -> dict[str, Any]:
    """The baseline's figures the changes were computed from (rescored under the current labels when the
    check rescored it), and then its figures as stored; every figure the baseline has."""
    rows = [row for row in (*view.rates, *view.ranking) if row.baseline is not None]
    rescored = any(row.rescored for row in rows)
    return {
        "baseline_rescored": rescored,
        "baseline_figures": {row.key: row.baseline for row in rows},
        "baseline_figures_as_stored": {row.key: row.stored_baseline for row in rows} if rescored else None,
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
