"""Every partition materializes on a real instance, with metadata a person can read at a glance."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from xml.etree import ElementTree

import pyarrow.parquet as pq
import pytest
import yaml
from chart_helpers import png_size
from dagster import AssetKey, MetadataValue
from dagster_runs import evaluate, materialize_everything, only_materialization, run_job
from dagster_test_project import RETRIEVERS, SETS
from rich.console import Console

from retrieval_pipeline.cli.nightly import run_nightly
from retrieval_pipeline.core.base.redaction import REDACTED, fingerprint, redacted
from retrieval_pipeline.dagster_layer.definitions import RETRIEVERS_JOB, SETS_JOB, build_definitions

EVALUATION = AssetKey("retrieval_evaluation")


def latest(instance, asset: str, partition: str | None = None):
    from dagster import AssetRecordsFilter

    records = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=AssetKey(asset), asset_partitions=[partition] if partition else None), limit=1
    ).records
    return records[0].asset_materialization


@pytest.mark.slow
def test_every_partition_materializes_with_its_check(defs, instance):
    materialize_everything(defs, instance, SETS, RETRIEVERS)

    assert instance.get_materialized_partitions(AssetKey("golden_question_set")) == set(SETS)
    assert instance.get_materialized_partitions(AssetKey("retriever_config")) == set(RETRIEVERS)
    assert instance.get_materialized_partitions(EVALUATION) == {f"{r}|{s}" for s in SETS for r in RETRIEVERS}
    assert instance.get_latest_materialization_event(AssetKey("leaderboard")) is not None


def test_evaluation_metadata_is_readable_at_a_glance(defs, instance, project):
    materialization = only_materialization(evaluate(defs, instance, "alpha", "other"))
    metadata = materialization.metadata
    # "other" misses a3 (a gap question of class normal): 5 of 6 at top-1 and top-3.
    assert metadata["top1_hit_rate"] == MetadataValue.float(0.8333)  # 4 decimals: the plots need no more
    assert metadata["top3_hit_rate"] == MetadataValue.float(0.8333)
    assert metadata["dagster/row_count"] == MetadataValue.int(6)
    assert metadata["complete"] == MetadataValue.bool(True)
    assert metadata["verdict"].value == "No baseline: recorded as the baseline."
    assert metadata["top1"].value == metadata["top3"].value == "83.3% (5/6), 95% CI 43.6–97.0%"
    by_form = {r.data["key"]: r.data for r in metadata["by_form"].value.records}
    assert by_form["gap"] == {"key": "gap", "questions": 3, "top1": "66.7%", "top3": "66.7%"}
    assert [c.name for c in metadata["by_hard_class"].schema.columns] == ["key", "questions", "top1", "top3"]
    preview = metadata["questions_preview"].value.records
    assert (preview[0].data["question"], preview[0].data["outcome"]) == ("a3", "miss")
    assert preview[0].data["unjudged"] == preview[0].data["retrieved"] == "d90, d91, d92"  # none of them labelled
    assert metadata["questions_preview_order"].value.startswith("6 of 6 questions: errors first, then top-3 misses")
    assert len(preview) == 6
    assert list(metadata)[:5] == ["verdict", "verdict_status", "top1", "top3", "history_chart"]  # read first
    chart = metadata["history_chart"].value
    assert chart.startswith("![top-k hit rates of alpha × other, last runs](data:image/svg+xml;base64,") and len(chart) < 100_000
    svg = ElementTree.fromstring(base64.b64decode(chart.removesuffix(")").split(",")[-1]))
    assert (svg.get("width"), svg.get("height")) == ("720", "324")  # drawn without matplotlib, as each partition draws one
    assert {"latency_batch_mean_ms", "run_id", "index_version"} <= set(metadata)
    # A run file answers in batches: only the mean per question was measured, so no percentile is shown.
    assert metadata["latency_mode"].value == "batch_mean" and "latency_p95_ms" not in metadata
    assert metadata["top1_ci_low"].value == 0.4365 and metadata["top1_ci_high"].value == 0.9699
    assert metadata["mrr@3"].value == 0.833 and 0 < metadata["recall@3"].value <= 5 / 6  # three decimals, as a score reads

    result_file = Path(metadata["result_uri"].value)
    assert result_file.is_relative_to(project.store / "questions" / "alpha" / "other")
    table = pq.read_table(result_file)
    assert table.num_rows == 6 and "retrieved_document_ids" in table.column_names
    assert Path(metadata["summary_uri"].value).is_file()


def test_question_sets_are_written_as_parquet_with_counts(defs, instance, project):
    metadata = only_materialization(run_job(defs, instance, SETS_JOB, "alpha")).metadata
    assert metadata["question_count"] == MetadataValue.int(6)
    assert metadata["no_answer_questions"] == MetadataValue.int(1)
    assert {r.data["key"]: r.data["questions"] for r in metadata["by_form"].value.records} == {"match": 3, "gap": 3}
    assert {r.data["key"]: r.data["questions"] for r in metadata["by_hard_class"].value.records} == {
        "normal": 2,
        "near-duplicate": 1,
        "prose-free": 1,
    }
    path = Path(metadata["questions_uri"].value)
    assert path == project.store / "question_sets" / "alpha.parquet"
    assert pq.read_table(path).column("question_id").to_pylist() == ["a1", "a2", "a3", "a4", "a5", "a6"]


def test_retriever_metadata_shows_kind_fingerprint_and_version(defs, instance):
    metadata = only_materialization(run_job(defs, instance, RETRIEVERS_JOB, "good")).metadata
    assert metadata["kind"].value == "run_file"
    assert metadata["index_version"].value.startswith("sha256:")
    assert metadata["configuration_fingerprint"].value == fingerprint("run_file", {"path": "runs/good.jsonl", "format": "jsonl"})
    assert metadata["query_mode"].value == "current"


def test_secrets_never_reach_the_metadata(tmp_path, monkeypatch, instance, project):
    monkeypatch.setenv("SEARCH_TOKEN", "s3cr3t-token-value")
    config = yaml.safe_load(project.config.read_text(encoding="utf-8"))
    config["retrievers"]["remote"] = {
        "kind": "http",
        "url": "https://search.invalid/query",
        "headers": {"Authorization": {"env": "SEARCH_TOKEN", "prefix": "Bearer "}, "X-Api-Key": "literal-key-in-the-file"},
    }
    path = project.root / "with-remote.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    metadata = only_materialization(run_job(build_definitions(path), instance, RETRIEVERS_JOB, "remote")).metadata
    shown = repr(metadata)
    assert "s3cr3t-token-value" not in shown and "literal-key-in-the-file" not in shown
    assert metadata["configuration"].value["headers"] == {"Authorization": {"env": "SEARCH_TOKEN"}, "X-Api-Key": REDACTED}
    assert metadata["index_version"].value == "not reported"


def test_redaction_rules():
    assert redacted({"api_key": "k", "nested": {"password": 3, "ok": 1}, "list": [{"token": "t"}]}) == {
        "api_key": REDACTED,
        "nested": {"password": REDACTED, "ok": 1},
        "list": [{"token": REDACTED}],
    }


@pytest.mark.slow
def test_the_leaderboard_puts_every_pair_side_by_side(defs, instance):
    materialize_everything(defs, instance, SETS, RETRIEVERS)
    metadata = latest(instance, "leaderboard").metadata
    rows = [r.data for r in metadata["leaderboard"].value.records]
    assert [(r["set"], r["rank"], r["retriever"]) for r in rows] == [
        ("alpha", 1, "good"),
        ("alpha", 2, "other"),
        ("beta.small", 1, "good"),
        ("beta.small", 2, "other"),
    ]
    assert metadata["top1_hit_rate/alpha/good"] == MetadataValue.float(1.0)
    assert metadata["top3_hit_rate/beta.small/good"] == MetadataValue.float(0.75)
    assert metadata["top3_hit_rate/beta.small/other"] == MetadataValue.float(0.5)
    assert "Side by side" in metadata["summary"].value
    assert png_size(metadata["leaderboard_chart"].value)[0] > 0
    # Run files answer in batches: the batch mean is shown under its own name and no p95 is invented.
    runs = [r.data for r in metadata["leaderboard_runs"].value.records]
    assert [(r["set"], r["retriever"]) for r in runs] == [(r["set"], r["retriever"]) for r in rows]
    assert all(r["p95_latency_ms"] is None and r["batch_mean_latency_ms"] is not None for r in runs)
    assert rows[0]["mrr"] == "1.000" and "0.000" < rows[0]["ndcg"] <= "1.000"  # `good` has every top-1 hit: MRR 1
    assert "### `alpha`, ranked by top-1" in metadata["summary"].value
    assert "| # | retriever | top-1 | top-3 | mrr@3 | ndcg@3 | judged@3 | latency ms |" in metadata["summary"].value
    assert rows[0]["judged"] not in ("0.0%", "100.0%")  # `good` ranks documents beside its labels that nobody judged
    assert rows[0]["judged"].endswith("%")


@pytest.mark.slow
def test_every_partition_of_the_demo_materializes(tmp_path, instance, monkeypatch):
    """The embedded demo (BM25 variants over Cranfield's questions and the demo conversations), via the
    main command's code path."""
    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)
    output = io.StringIO()
    report = run_nightly(store_uri=str(tmp_path / "store"), instance=instance, console=Console(file=output, width=160))
    assert report.exit_code == 0, output.getvalue()
    demo = build_definitions()
    expected = set(demo.resolve_assets_def(EVALUATION).partitions_def.get_partition_keys())
    assert len(expected) == 12 and instance.get_materialized_partitions(EVALUATION) == expected
    assert all(outcome.check_passed for outcome in report.evaluations)
    assert "Leaderboard: demo.cranfield" in output.getvalue() and "Leaderboard: demo.conversations" in output.getvalue()
    assert "By turn depth (top-1 / top-3): demo.conversations" in output.getvalue()
