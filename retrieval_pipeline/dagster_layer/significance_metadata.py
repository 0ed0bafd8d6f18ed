"""The regression check's metadata on uncertainty and ranking: per-slice paired tests with Holm-corrected
p-values, the smallest drop the set could detect, and the ranking-metric changes, from the evaluation's view.

Every figure is text, formatted as its measure reads (changes in pp, scores to three decimals, p-values
to three): a person reads them, and a raw float such as -0.03954530423280406 says less than "-0.040"."""

from __future__ import annotations

from typing import Any

from dagster import MetadataValue, TableColumn, TableRecord, TableSchema

from retrieval_pipeline.core.base.formatting import as_written, points
from retrieval_pipeline.core.services.views.evaluation_view import EvaluationView

SLICE_TEST_SCHEMA = TableSchema(
    columns=[
        TableColumn("slice", "string", description="overall, form or hard_class"),
        TableColumn("key", "string"),
        TableColumn("measure", "string", description="The figure compared: top1, top3, mrr@10, ..."),
        TableColumn("k", "int", description="Cut-off"),
        TableColumn("questions", "int"),
        TableColumn("change", "string", description="Change: percentage points for a hit rate, the score for a ranking measure"),
        TableColumn("delta_95_ci", "string", description="95% bootstrap interval of the change (ranking measures)"),
        TableColumn("p_value", "string", description="Uncorrected: exact McNemar (hit rates), paired randomization (ranking)"),
        TableColumn("corrected_p_value", "string", description="Holm-corrected over every test of the table"),
        TableColumn("survives", "bool", description="Corrected p-value at or below the significance level"),
    ]
)


def significance_metadata(view: EvaluationView) -> dict[str, Any]:
    tests = view.slice_tests
    if not tests.rows:
        return {}
    metadata: dict[str, Any] = {
        "significance": MetadataValue.text(as_written(tests.significance)),
        "slice_tests": MetadataValue.table(
            records=[
                TableRecord(
                    {
                        "slice": row.test.slice,
                        "key": row.test.key,
                        "measure": row.figure.key,
                        "k": row.test.k,
                        "questions": row.test.questions,
                        "change": row.delta_text,
                        "delta_95_ci": row.interval_text,
                        "p_value": row.p_text,
                        "corrected_p_value": row.corrected_text,
                        "survives": row.survives,
                    }
                )
                for row in tests.rows
            ],
            schema=SLICE_TEST_SCHEMA,
        ),
        "surviving_differences": MetadataValue.int(len(tests.surviving)),
        **{f"{row.key}_change": MetadataValue.text(row.checked_text) for row in view.run.ranking_changes},
    }
    if view.minimum_detectable_drop is not None:
        metadata["minimum_detectable_drop"] = MetadataValue.text(points(view.minimum_detectable_drop))
    else:
        metadata["minimum_detectable_drop"] = MetadataValue.text("none: the set is too small for any drop to be significant")
    return metadata
