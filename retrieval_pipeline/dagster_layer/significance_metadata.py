"""The regression check's metadata on uncertainty and ranking: per-slice paired tests with Holm-corrected
p-values, the smallest drop the set could detect, and the ranking-metric changes, from the evaluation's view."""

from __future__ import annotations

from typing import Any

from dagster import MetadataValue, TableColumn, TableRecord, TableSchema

from retrieval_pipeline.core.services.views.evaluation_view import EvaluationView

SLICE_TEST_SCHEMA = TableSchema(
    columns=[
        TableColumn("slice", "string", description="overall, form or hard_class"),
        TableColumn("key", "string"),
        TableColumn("measure", "string", description="The figure compared: top1, top3, mrr@10, ..."),
        TableColumn("k", "int", description="Cut-off"),
        TableColumn("questions", "int"),
        TableColumn("delta_pp", "float", description="Change: percentage points for a hit rate, the score for a ranking measure"),
        TableColumn("delta_95_ci", "string", description="95% bootstrap interval of the change (ranking measures)"),
        TableColumn("p_value", "float", description="Uncorrected: exact McNemar (hit rates), paired randomization (ranking)"),
        TableColumn("corrected_p_value", "float", description="Holm-corrected over every test of the table"),
        TableColumn("survives", "bool", description="Corrected p-value at or below the significance level"),
    ]
)


def significance_metadata(view: EvaluationView) -> dict[str, Any]:
    tests = view.slice_tests
    if not tests.rows:
        return {}
    metadata: dict[str, Any] = {
        "significance": MetadataValue.float(tests.significance),
        "slice_tests": MetadataValue.table(
            records=[
                TableRecord(
                    {
                        "slice": row.test.slice,
                        "key": row.test.key,
                        "measure": row.figure.key,
                        "k": row.test.k,
                        "questions": row.test.questions,
                        "delta_pp": row.delta_points,
                        "delta_95_ci": row.interval_text,
                        "p_value": row.test.p_value,
                        "corrected_p_value": row.test.corrected_p_value,
                        "survives": row.survives,
                    }
                )
                for row in tests.rows
            ],
            schema=SLICE_TEST_SCHEMA,
        ),
        "surviving_differences": MetadataValue.int(len(tests.surviving)),
        **{f"{row.key}_delta": MetadataValue.float(row.checked) for row in view.run.ranking_changes},
    }
    if view.minimum_detectable_drop is not None:
        metadata["minimum_detectable_drop"] = MetadataValue.float(view.minimum_detectable_drop)
    else:
        metadata["minimum_detectable_drop"] = MetadataValue.text("none: the set is too small for any drop to be significant")
    return metadata
