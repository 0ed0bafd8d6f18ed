"""kind: qdrant against qdrant-client's local mode (the client's real API, in process), holding the
vectors the `dense` kind's model gives the demo corpus's first documents."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from vector_stores import QUESTIONS, corpus_ids, document_vectors, encoder_params, load_collection

from retrieval_pipeline.cli import main
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.retrievers.vector import qdrant
from retrieval_pipeline.retrievers.vector.dense import DenseKind
from retrieval_pipeline.retrievers.vector.qdrant import QdrantKind

CORPUS_DOCUMENTS = 80
API_KEY = "qd-key-71c0a9e4b2"
API_KEY_VAR = "RETRIEVAL_EVAL_TEST_QDRANT_KEY"

pytestmark = pytest.mark.slow
pytest.importorskip("qdrant_client", reason="needs pip install 'retrieval-pipeline[qdrant]'")


@pytest.fixture(autouse=True)
def closed_clients():
    yield
    qdrant.close_local_clients()


@pytest.fixture
def local(tmp_path, corpus, minilm) -> Path:
    ids, vectors = document_vectors(corpus, minilm)
    folder = tmp_path / "qdrant"
    load_collection(folder, "docs", ids, vectors)
    return folder


def settings(folder: Path, minilm, **params) -> dict:
    return {"path": str(folder), "collection": "docs", "id_payload_field": "doc_id", **encoder_params(minilm), **params}


def test_the_top_3_per_question_equals_the_dense_kind_on_the_same_corpus_and_model(local, corpus, minilm, context):
    dense = DenseKind.parse("dense", {"corpus": corpus.name, **encoder_params(minilm)}, context).build()
    store = QdrantKind.parse("qd", settings(local, minilm), context).build()
    assert [store.retrieve(question, 3) for question in QUESTIONS] == dense.retrieve_batch(QUESTIONS, 3)
    assert store.concurrency == 1


def test_the_filter_applies_to_every_search_and_to_the_corpus_the_label_audit_reads(local, corpus, minilm, context):
    acme = {"must": [{"key": "tenant", "match": {"value": "acme"}}]}
    store = QdrantKind.parse("qd", settings(local, minilm, filter=acme), context).build()
    wanted = set(corpus_ids(corpus)[1::2])
    assert all(set(store.retrieve(question, 10)) <= wanted for question in QUESTIONS)
    assert QdrantKind.parse("qd", settings(local, minilm, filter=acme), context).corpus() == wanted
    assert QdrantKind.parse("qd", settings(local, minilm), context).corpus() == frozenset(corpus_ids(corpus))


def test_a_changed_collection_or_a_switched_alias_reports_a_new_index_version(local, corpus, minilm, context):
    ids, vectors = document_vectors(corpus, minilm)
    first = QdrantKind.parse("qd", settings(local, minilm), context).build().index_version()
    assert QdrantKind.parse("qd", settings(local, minilm), context).build().index_version() == first
    load_collection(local, "docs", ids[:-1], vectors[:-1])
    assert QdrantKind.parse("qd", settings(local, minilm), context).build().index_version() != first
    load_collection(local, "docs_v2", ids, vectors, alias="live")
    switched = QdrantKind.parse("qd", settings(local, minilm, collection="live"), context).build().index_version()
    assert switched.startswith("docs_v2, 80 points")


def test_a_missing_collection_or_payload_field_names_it(local, minilm, context):
    with pytest.raises(InvalidInputError, match="collection nope: Collection nope not found"):
        QdrantKind.parse("qd", settings(local, minilm, collection="nope"), context).build()
    store = QdrantKind.parse("qd", settings(local, minilm, id_payload_field="document"), context).build()
    with pytest.raises(qdrant.StoreFault, match="collection docs, point .* has no document id at payload field 'document'"):
        store.retrieve(QUESTIONS[0], 3)


def test_a_vector_name_the_collection_lacks_is_refused_when_built_naming_its_vectors(local, corpus, minilm, context):
    ids, vectors = document_vectors(corpus, minilm)
    load_collection(local, "named", ids, vectors, vector_name="minilm")
    named = settings(local, minilm, collection="named")
    plain = QdrantKind.parse("qd", settings(local, minilm), context).build()
    assert QdrantKind.parse("qd", {**named, "vector_name": "minilm"}, context).build().retrieve(
        QUESTIONS[0], 3
    ) == plain.retrieve(QUESTIONS[0], 3)
    with pytest.raises(InvalidInputError, match=r"retrievers.qd: field 'vector_name': .* no vector 'dense'; its vectors: minilm"):
        QdrantKind.parse("qd", {**named, "vector_name": "dense"}, context).build()
    with pytest.raises(InvalidInputError, match=r"field 'vector_name': .* named vectors only; give vector_name, one of: minilm"):
        QdrantKind.parse("qd", named, context).build()
    with pytest.raises(InvalidInputError, match=r"field 'vector_name': collection docs has one unnamed vector, no 'minilm'"):
        QdrantKind.parse("qd", settings(local, minilm, vector_name="minilm"), context).build()


def test_a_local_folder_another_process_holds_is_one_line_naming_the_retriever_and_the_path(local, minilm, tmp_path):
    questions = [{"id": "q1", "question": QUESTIONS[0], "form": "match", "expected_document_ids": ["1"]}]
    (tmp_path / "set.yaml").write_text(
        yaml.safe_dump({"identifier": "qd.small", "name": "small", "questions": questions}), "utf-8"
    )
    config = {
        "store": "results",
        "question_sets": [{"file": "set.yaml"}],
        "retrievers": {"qd": {"kind": "qdrant", **settings(local, minilm)}},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    hold = "import sys; from qdrant_client import QdrantClient; c = QdrantClient(path=sys.argv[1]); print('held', flush=True); sys.stdin.read()"
    with subprocess.Popen(
        [sys.executable, "-c", hold, str(local)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as holder:
        try:
            assert holder.stdout.readline() == "held\n"
            result = CliRunner().invoke(main, ["run", "qd.small", "qd", "--config", str(tmp_path / "config.yaml")])
        finally:
            holder.stdin.close()
    assert result.exit_code == 2, result.output
    assert len(result.stderr.splitlines()) == 1
    assert "retrievers.qd: field 'path'" in result.stderr and f"{local} is already accessed by another instance" in result.stderr
    assert not list(tmp_path.rglob("*.parquet"))


def test_a_bad_filter_is_named_by_its_first_error_at_the_key_written(minilm, context):
    server = {"url": "http://192.0.2.1:6333", "collection": "docs", "id_payload_field": "doc_id", **encoder_params(minilm)}
    misspelt = {"must": [{"key": "tenant", "match": {"valu": "acme"}}]}
    with pytest.raises(InvalidInputError) as refused:
        QdrantKind.parse("qd", {**server, "filter": misspelt}, context)
    assert str(refused.value).endswith(
        "retrievers.qd: field 'filter.must.0.match.valu': not a Qdrant filter: is not a known field; did you mean 'value'?"
    )


def test_check_config_connects_nowhere_and_refuses_a_bad_filter_or_place(tmp_path, minilm, context):
    server = {"url": "http://192.0.2.1:6333", "collection": "docs", "id_payload_field": "doc_id", **encoder_params(minilm)}
    assert QdrantKind.parse("qd", server, context).params.url == server["url"]
    with pytest.raises(InvalidInputError, match="not a Qdrant filter"):
        QdrantKind.parse("qd", {**server, "filter": {"must": "tenant"}}, context)
    with pytest.raises(InvalidInputError, match="exactly one of url .* and path"):
        QdrantKind.parse("qd", {**server, "path": str(tmp_path)}, context)


def test_the_api_key_comes_from_the_environment_and_no_error_shows_it(monkeypatch, minilm, context: BuildContext):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    params = {"url": f"http://127.0.0.1:{port}", "collection": "docs", "id_payload_field": "doc_id", **encoder_params(minilm)}
    with pytest.raises(InvalidInputError, match=f"{API_KEY_VAR} is not set"):
        QdrantKind.parse("qd", {**params, "api_key": {"env": API_KEY_VAR}}, context).build()
    monkeypatch.setenv(API_KEY_VAR, API_KEY)
    with pytest.raises(InvalidInputError, match="cannot reach Qdrant for collection docs") as unreachable:
        QdrantKind.parse("qd", {**params, "api_key": {"env": API_KEY_VAR}, "timeout_seconds": 2}, context).build()
    assert API_KEY not in str(unreachable.value) and "retrievers.qd" in str(unreachable.value)
