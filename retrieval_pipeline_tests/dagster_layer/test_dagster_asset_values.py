"""The assets' values: after a nightly run on a fresh instance, `load_asset_value` and downstream
assets get pyarrow Tables read from the result store's own files, local or remote, never a copy."""

from __future__ import annotations

import io
import uuid

import pyarrow.parquet as pq
import pytest
from dagster import AssetKey, DagsterInstance, MultiPartitionKey, build_input_context, build_output_context
from dagster_runs import evaluate, failure_metadata, run_job
from dagster_test_project import ALPHA, BETA, RETRIEVERS, SETS, degraded
from fsspec.core import url_to_fs
from rich.console import Console

from retrieval_pipeline.cli.nightly import run_nightly
from retrieval_pipeline.core.base.errors import StoreError, UnknownIdentifierError
from retrieval_pipeline.dagster_layer.definitions import build_definitions

EVALUATION = "retrieval_evaluation"
QUESTIONS = {"alpha": [q["id"] for q in ALPHA["questions"]], "beta.small": [q["id"] for q in BETA["questions"]]}


def nightly(project, instance, store_uri=None):
    output = io.StringIO()
    report = run_nightly(project.config, store_uri, instance=instance, console=Console(file=output, width=200))
    assert report.exit_code == 0, output.getvalue()


def stored_files(store_uri: str) -> list[str]:
    """Every file under the store, listed with fsspec: independent of the store's own reader."""
    file_system, root = url_to_fs(store_uri)
    return sorted(file_system.find(root)) if file_system.exists(root) else []


@pytest.mark.slow
def test_one_evaluation_partition_loads_as_its_latest_run_with_the_metadatas_result_uri(project, defs, instance):
    nightly(project, instance)
    project.write_run("good", degraded("a1"))  # a regression: the partition fails, the run is stored all the same
    failed = failure_metadata(evaluate(defs, instance, "alpha", "good", raise_on_error=False))

    table = defs.load_asset_value(EVALUATION, partition_key="good|alpha", instance=instance)

    assert table.column("run_id").unique().to_pylist() == [failed["run_id"].value]  # the store's latest run
    assert table.column("question_id").to_pylist() == QUESTIONS["alpha"]
    assert table.column("top1_hit").to_pylist() == [False, True, True, True, True, True]
    assert {
        "set_identifier",
        "retriever_identifier",
        "form",
        "hard_class",
        "expected_document_ids",
        "retrieved_document_ids",
        "top3_hit",
        "latency_ms",
        "error",
    } <= set(table.column_names)
    assert set(table.column("set_identifier").to_pylist()) == {"alpha"}
    stored = pq.read_table(failed["result_uri"].value)
    assert table.select(stored.column_names).equals(stored)  # the very file the metadata points at


@pytest.mark.slow
def test_all_evaluation_partitions_load_as_one_table_with_set_and_retriever_columns(project, defs, instance):
    nightly(project, instance)
    table = defs.load_asset_value(EVALUATION, instance=instance)
    pairs = {(s, r): 0 for s in SETS for r in RETRIEVERS}
    for row in table.select(["set_identifier", "retriever_identifier"]).to_pylist():
        pairs[(row["set_identifier"], row["retriever_identifier"])] += 1
    assert pairs == {(s, r): len(QUESTIONS[s]) for s in SETS for r in RETRIEVERS}
    misses = table.filter(table["top3_hit"].is_valid()).to_pandas().query("not top3_hit")
    assert sorted(zip(misses.retriever_identifier, misses.question_id)) == [
        ("good", "b4"),
        ("other", "a3"),
        ("other", "b2"),
        ("other", "b4"),
    ]


@pytest.mark.slow
def test_golden_question_sets_load_one_or_all(project, defs, instance):
    nightly(project, instance)
    alpha = defs.load_asset_value("golden_question_set", partition_key="alpha", instance=instance)
    assert alpha.column("question").to_pylist() == [q["question"] for q in ALPHA["questions"]]
    every = defs.load_asset_value("golden_question_set", instance=instance)
    counts = every.group_by("set_identifier").aggregate([("question_id", "count")]).to_pylist()  # groups in any order
    assert sorted(counts, key=lambda row: row["set_identifier"]) == [
        {"set_identifier": s, "question_id_count": len(QUESTIONS[s])} for s in sorted(SETS)
    ]


@pytest.mark.slow
def test_the_leaderboard_loads_as_its_ranked_table(project, defs, instance):
    nightly(project, instance)
    rows = defs.load_asset_value("leaderboard", instance=instance).to_pylist()
    assert [(r["set_identifier"], r["rank"], r["retriever_identifier"], r["top3_hit_rate"]) for r in rows] == [
        ("alpha", 1, "good", 1.0),
        ("alpha", 2, "other", pytest.approx(5 / 6)),
        ("beta.small", 1, "good", 0.75),
        ("beta.small", 2, "other", 0.5),
    ]


@pytest.mark.slow
def test_each_run_is_written_once_and_handle_output_writes_nothing(project, defs, instance):
    nightly(project, instance)
    before = stored_files(str(project.store))
    evaluate(defs, instance, "alpha", "good")
    after_run = stored_files(str(project.store))
    assert [path.split("/store/")[1].split("/")[0] for path in sorted(set(after_run) - set(before))] == ["questions", "summaries"]

    manager = defs.resources["result_store_io_manager"]
    key = MultiPartitionKey({"set": "alpha", "retriever": "good"})
    context = build_output_context(asset_key=AssetKey(EVALUATION), partition_key=key)
    manager.handle_output(context, None)
    assert stored_files(str(project.store)) == after_run
    with pytest.raises(TypeError, match="retrieval_evaluation: its value is written by the result store"):
        manager.handle_output(context, {"a": 1})
    assert stored_files(str(project.store)) == after_run


def test_a_partition_with_nothing_stored_is_named_unless_missing_partitions_are_allowed(project, defs, instance):
    evaluate(defs, instance, "alpha", "good")
    with pytest.raises(StoreError, match=r"retrieval_evaluation: nothing stored for partition\(s\) .*other\|alpha"):
        defs.load_asset_value(EVALUATION, instance=instance)
    loader = defs.get_asset_value_loader(instance)
    with loader:
        table = loader.load_asset_value(EVALUATION, input_definition_metadata={"allow_missing_partitions": True})
    assert set(table.column("retriever_identifier").to_pylist()) == {"good"} and table.num_rows == len(QUESTIONS["alpha"])


def test_a_prefixed_instance_loads_its_values_under_its_own_keys_through_its_own_io_manager(project, instance):
    prefixed = build_definitions(project.config, prefix="search")
    key = MultiPartitionKey({"set": "alpha", "retriever": "good"})
    run_job(prefixed, instance, "search_retrieval_evaluation_job", key)

    table = prefixed.load_asset_value(AssetKey(["search", EVALUATION]), instance=instance, partition_key=key)

    assert set(table.column("retriever_identifier").to_pylist()) == {"good"} and table.num_rows == len(QUESTIONS["alpha"])


def test_an_asset_without_a_stored_value_is_refused_with_the_ones_that_have_one(defs):
    context = build_input_context(asset_key=AssetKey("query_logs"))
    with pytest.raises(UnknownIdentifierError, match="available: golden_question_set, leaderboard, retrieval_evaluation"):
        defs.resources["result_store_io_manager"].load_input(context)


@pytest.mark.slow
def test_a_remote_store_uri_serves_the_same_values_through_the_same_io_manager(project):
    store_uri = f"memory://asset-values-{uuid.uuid4().hex}/results"
    with DagsterInstance.ephemeral() as instance:
        nightly(project, instance, store_uri)
        defs = build_definitions(project.config, store_uri)
        evaluation = defs.load_asset_value(EVALUATION, partition_key="other|beta.small", instance=instance)
        assert evaluation.column("top3_hit").to_pylist() == [True, False, True, False]
        assert defs.load_asset_value(EVALUATION, instance=instance).num_rows == 2 * sum(map(len, QUESTIONS.values()))
        assert defs.load_asset_value("golden_question_set", partition_key="beta.small", instance=instance).num_rows == 4
        assert defs.load_asset_value("leaderboard", instance=instance).num_rows == 4
    assert not project.store.exists()  # nothing written to the configuration's local store
    assert any(path.endswith("/question_sets/alpha.parquet") for path in stored_files(store_uri))
