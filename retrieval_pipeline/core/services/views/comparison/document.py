"""A comparison as one JSON-ready document: what `ComparisonView.to_dict` returns and `retrieval-eval compare
--json` prints: the runs side by side, their paired tests and the questions they disagree on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from retrieval_pipeline.core.services.views.documents import run_summary, set_changes, slice_tests
from retrieval_pipeline.core.services.views.question_rows import QuestionRows

if TYPE_CHECKING:
    from retrieval_pipeline.core.services.views.comparison_view import ComparedRun, ComparisonView


def comparison(view: ComparisonView) -> dict[str, Any]:
    """`saved` is whether the runs were saved (`compare --save`); a saved run has its id and verdict."""
    saved, reference = view.saved, view.reference.run.result
    positions = [reference.questions.positions[d.question_id] for d in view.disagreements]
    rows = [list(QuestionRows(compared.run.result, positions)) for compared in view.runs]  # the runs line up question by question
    return {
        "set": view.set_identifier,
        "question_count": reference.question_count,
        "labels": reference.labels,
        "reference": view.reference.identifier,
        "set_changes": {compared.identifier: set_changes(changes) for compared, changes in zip(view.others, view.set_changes)},
        "saved": saved is not None,
        "runs": [_compared_run(compared, (saved or {}).get(compared.identifier)) for compared in view.runs],
        "paired_tests": [
            {
                "reference": view.reference.identifier,
                "retriever": compared.identifier,
                "measure": row.figure.key,
                "k": row.test.k,
                "reference_only_hits": row.test.first_only,
                "retriever_only_hits": row.test.second_only,
                "delta": row.test.delta,
                "delta_interval": None if row.test.interval is None else list(row.test.interval),
                "p_value": row.test.p_value,
                "corrected_p_value": row.test.corrected_p_value,
            }
            for compared in view.others
            for row in compared.slice_tests.overall
        ],
        "significance": view.significance,
        "slice_tests": {compared.identifier: slice_tests(compared.slice_tests) for compared in view.others},
        "disagreements": [
            {
                "id": d.question_id,
                "form": d.form,
                "hard_class": d.hard_class,
                "expected_document_ids": list(d.expected_document_ids),
                "results": {
                    compared.identifier: {key: value for key, value in row[index].items() if key not in _SHARED}
                    for compared, row in zip(view.runs, rows)
                },
            }
            for index, d in enumerate(view.disagreements)
        ],
    }


_SHARED = ("id", "form", "hard_class", "expected_document_ids")


def _compared_run(compared: ComparedRun, saved: tuple[str, str] | None) -> dict[str, Any]:
    """A fresh run that was not saved has no run id anyone could look up."""
    run_id, verdict = saved if saved else (None, None)
    document = {**run_summary(compared.run), "run_id": run_id, "regression_summary": verdict}
    if compared.traffic is not None:
        document["traffic"] = compared.traffic.to_dict()
    return document
