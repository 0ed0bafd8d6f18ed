"""kind: pgvector and kind: qdrant evaluated the way users run them (`retrieval-eval run` and `audit`, the
Dagster index-rebuild sensor on a real instance), beside kind: dense on the same corpus and model."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner
from dagster import DagsterInstance, build_sensor_context
from vector_stores import QUESTIONS, document_vectors, encoder_params, load_collection, load_table

from retrieval_pipeline.cli import main
from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, build_definitions
from retrieval_pipeline.dagster_layer.sensors import INDEX_SENSOR
from retrieval_pipeline.retrievers.vector import qdrant

CORPUS_DOCUMENTS = 60
SET = "stores.small"

# Dagster 1.13 itself tags multi-partition runs `dagster/partition/<dimension>` and warns about such keys.
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:Non-compliant tag keys:DeprecationWarning")]
pytest.importorskip("qdrant_client", reason="needs pip install 'retrieval-pipeline[qdrant]'")


@pytest.fixture
def project(tmp_path, corpus, minilm, pgvector_dsn, monkeypatch):
    """A set of the test questions (one label naming no document), and the same documents three ways."""
    monkeypatch.setenv("RETRIEVAL_EVAL_CACHE", str(tmp_path / "cache"))
    ids, vectors = document_vectors(corpus, minilm)
    load_table(pgvector_dsn, "evaluated", ids, vectors)
    load_collection(tmp_path / "qdrant", "docs", ids, vectors)
    questions = [
        {"id": f"q{n}", "question": text, "form": "match", "expected_document_ids": [ids[n]]} for n, text in enumerate(QUESTIONS)
    ]
    questions[0]["expected_document_ids"] = ["typo-1"]
    (tmp_path / "set.yaml").write_text(yaml.safe_dump({"identifier": SET, "name": "stores", "questions": questions}), "utf-8")
    encoder = encoder_params(minilm)
    retrievers = {
        "dense": {"kind": "dense", "corpus": corpus.name, **encoder},
        "pg": {
            "kind": "pgvector",
            "dsn": pgvector_dsn,
            "table": "evaluated",
            "id_column": "doc_id",
            "vector_column": "embedding",
        },
        "qd": {"kind": "qdrant", "path": "qdrant", "collection": "docs", "id_payload_field": "doc_id"},
    }
    for store in ("pg", "qd"):
        retrievers[store].update(encoder)
    config = {"store": "results", "question_sets": [{"file": "set.yaml"}], "retrievers": retrievers}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    yield tmp_path / "config.yaml"
    qdrant.close_local_clients()


def cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_a_run_through_each_store_gives_the_dense_kinds_top_3_per_question(project):
    top3 = {}
    for retriever in ("dense", "pg", "qd"):
        result = cli("run", SET, retriever, "--config", str(project), "--json")
        assert result.exit_code == 0, result.output
        document = json.loads(result.stdout)
        assert document["complete"] is True
        top3[retriever] = [question["retrieved_document_ids"][:3] for question in document["questions"]]
    assert top3["pg"] == top3["dense"] and top3["qd"] == top3["dense"]


@pytest.mark.parametrize("store", ["pg", "qd"])
def test_the_label_audit_finds_a_label_naming_no_document_of_the_store(project, store):
    result = cli("audit", SET, store, "--config", str(project), "--json")
    assert result.exit_code == 0, result.output
    missing = [f for f in json.loads(result.stdout)["findings"] if f["kind"] == "label_not_in_corpus"]
    assert [(f["question_id"], f["document_id"]) for f in missing] == [("q0", "typo-1")]


def test_the_index_rebuild_sensor_evaluates_the_table_again_once_it_is_rebuilt(project, corpus, minilm, pgvector_dsn):
    defs = build_definitions(project)
    sensor = defs.resolve_sensor_def(INDEX_SENSOR)
    with DagsterInstance.ephemeral() as instance:

        def tick(cursor=None):
            context = build_sensor_context(
                instance=instance, cursor=cursor, resources=defs.resources, repository_def=defs.get_repository_def()
            )
            return sensor.evaluate_tick(context)

        first = tick()
        unchanged = tick(first.cursor)
        assert [r for r in unchanged.run_requests if r.job_name == EVALUATION_JOB] == []
        ids, vectors = document_vectors(corpus, minilm)
        load_table(pgvector_dsn, "evaluated", ids, vectors)
        rebuilt = tick(unchanged.cursor)
    assert {str(r.partition_key) for r in rebuilt.run_requests if r.job_name == EVALUATION_JOB} == {f"pg|{SET}"}
    assert json.loads(rebuilt.cursor)["pg"] != json.loads(first.cursor)["pg"]
