"""The UI metadata's plain values typed for Dagster: what Dagster records is what the hand-typed metadata was."""

from __future__ import annotations

from dagster import AssetMaterialization, MetadataValue, TableColumn, TableRecord, TableSchema, serialize_value

from retrieval_pipeline.dagster_layer.metadata.values import Column, Json, Link, Markdown, plotted, table, typed


def recorded(metadata: dict) -> str:
    """As Dagster serialises it in a materialization, the plain Python values typed by Dagster itself."""
    return serialize_value(AssetMaterialization("asset", metadata=metadata))


def test_each_value_becomes_the_metadata_value_it_was_typed_as_by_hand():
    core = {
        "rates": table(
            [Column("key", "string"), Column("top1", "string", description="Top-1 hit rate")], [{"key": "a", "top1": "50.0%"}]
        ),
        "description": Markdown("**bold**"),
        "store": Link("s3://bucket/results"),
        "questions_uri": Link("/data/store/questions.parquet"),
        "configuration": Json({"k1": 1.2}),
        "threshold": plotted(1),
        "question_count": 6,
        "complete": True,
        "flipped_to_miss": ["q1", "q2"],
        "yes_share": plotted(None),
        "verdict": "No regression.",
    }
    by_hand = {
        "rates": MetadataValue.table(
            records=[TableRecord({"key": "a", "top1": "50.0%"})],
            schema=TableSchema(
                columns=[TableColumn("key", "string"), TableColumn("top1", "string", description="Top-1 hit rate")]
            ),
        ),
        "description": MetadataValue.md("**bold**"),
        "store": MetadataValue.url("s3://bucket/results"),
        "questions_uri": MetadataValue.path("/data/store/questions.parquet"),
        "configuration": MetadataValue.json({"k1": 1.2}),
        "threshold": MetadataValue.float(1.0),
        "question_count": MetadataValue.int(6),
        "complete": MetadataValue.bool(True),
        "flipped_to_miss": MetadataValue.json(["q1", "q2"]),
        "yes_share": MetadataValue.null(),
        "verdict": MetadataValue.text("No regression."),
    }
    assert recorded(typed(core)) == recorded(by_hand)
    assert list(typed(core)) == list(core)  # the order the UI lists them in
