"""The regression check's metadata on uncertainty and ranking: per-slice paired tests with Holm-corrected
p-values, the smallest drop the set could detect, and the ranking-metric deltas, from the core's report."""

from __future__ import annotations

from typing import Any

from dagster import MetadataValue, TableColumn, TableRecord, TableSchema

from retrieval_pipeline.core.scoring.regression import RegressionReport

SLICE_TEST_SCHEMA = TableSchema(
    columns=[
        TableColumn("slice", "string", description="overall, form or hard_class"),
        TableColumn("key", "string"),
        TableColumn("k", "int", description="Cut-off"),
        TableColumn("questions", "int"),
        TableColumn("delta_pp", "float", description="Hit rate change, percentage points"),
        TableColumn("p_value", "float", description="Exact McNemar, uncorrected"),
        TableColumn("corrected_p_value", "float", description="Holm-corrected over every test of the table"),
        TableColumn("survives", "bool", description="Corrected p-value at or below the significance level"),
    ]
)


def significance_metadata(report: RegressionReport) -> dict[str, Any]:
    if not report.slice_tests:
        return {}
    metadata: dict[str, Any] = {
        "significance": MetadataValue.float(report.significance),
        "slice_tests": MetadataValue.table(
            records=[
                TableRecord(
                    {
                        "slice": test.slice,
                        "key": test.key,
                        "k": test.k,
                        "questions": test.questions,
                        "delta_pp": round(test.delta * 100, 2),
                        "p_value": test.p_value,
                        "corrected_p_value": test.corrected_p_value,
                        "survives": test.survives(report.significance),
                    }
                )
                for test in report.slice_tests
            ],
            schema=SLICE_TEST_SCHEMA,
        ),
        "surviving_differences": MetadataValue.int(sum(t.survives(report.significance) for t in report.slice_tests)),
        **{f"{name}_delta": MetadataValue.float(delta) for name, delta in report.metric_deltas},
    }
    if report.minimum_detectable_drop is not None:
        metadata["minimum_detectable_drop"] = MetadataValue.float(report.minimum_detectable_drop)
    else:
        metadata["minimum_detectable_drop"] = MetadataValue.text("none: the set is too small for any drop to be significant")
    return metadata
