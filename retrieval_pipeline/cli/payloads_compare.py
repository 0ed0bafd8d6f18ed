"""The `compare --json` document: the runs side by side, their paired tests and the questions they disagree on."""

from __future__ import annotations

from typing import Any

from retrieval_pipeline.cli.payloads import questions, run_summary, set_changes, slice_tests
from retrieval_pipeline.core.scoring.comparison import Comparison
from retrieval_pipeline.core.scoring.results import RunResult


def comparison(result: Comparison, saved: dict[str, tuple[str, str]] | None = None) -> dict[str, Any]:
    """`saved` maps each retriever to its stored run id and regression verdict (with --save)."""
    identifiers = result.retriever_identifiers
    positions = [result.reference.questions.positions[d.question_id] for d in result.disagreements]
    rows = [list(questions(run, positions)) for run in result.runs]  # the runs line up question by question
    return {
        "set": result.set_identifier,
        "question_count": result.reference.question_count,
        "reference": result.reference.retriever_identifier,
        "set_changes": {
            run.retriever_identifier: set_changes(changes) for run, changes in zip(result.runs[1:], result.set_changes)
        },
        "saved": saved is not None,
        "runs": [_compared_run(run, (saved or {}).get(run.retriever_identifier)) for run in result.runs],
        "paired_tests": [
            {
                "reference": result.reference.retriever_identifier,
                "retriever": other,
                "k": test.k,
                "reference_only_hits": test.first_only,
                "retriever_only_hits": test.second_only,
                "delta": test.delta,
                "p_value": test.p_value,
                "corrected_p_value": test.corrected_p_value,
            }
            for other in identifiers[1:]
            for test in result.tests_of(other)
            if test.slice == "overall"
        ],
        "significance": result.significance,
        "slice_tests": {other: slice_tests(result.tests_of(other), result.significance) for other in identifiers[1:]},
        "disagreements": [
            {
                "id": d.question_id,
                "form": d.form,
                "hard_class": d.hard_class,
                "expected_document_ids": list(d.expected_document_ids),
                "results": {
                    run.retriever_identifier: {key: value for key, value in row[index].items() if key not in _SHARED}
                    for run, row in zip(result.runs, rows)
                },
            }
            for index, d in enumerate(result.disagreements)
        ],
    }


_SHARED = ("id", "form", "hard_class", "expected_document_ids")


def _compared_run(run: RunResult, saved: tuple[str, str] | None) -> dict[str, Any]:
    """A fresh run that was not saved has no run id anyone could look up."""
    run_id, verdict = saved if saved else (None, None)
    return {**run_summary(run), "run_id": run_id, "regression_summary": verdict}
