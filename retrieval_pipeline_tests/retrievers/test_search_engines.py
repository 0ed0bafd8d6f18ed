"""The Elasticsearch templates of docs/stores/search-engines.md, run as written against a local server that
checks each request body against what Elasticsearch expects (search_engine_service)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from http_service import CORPUS, running
from search_engine_service import SearchEngine
from vector_stores import QUESTIONS, document_vectors, encoder_params

from retrieval_pipeline.core.retrieval.retriever_kinds import RETRIEVERS
from retrieval_pipeline.retrievers.http.client import HttpRetrieverError
from retrieval_pipeline.retrievers.http.retriever import HttpRetriever
from retrieval_pipeline.retrievers.vector.dense import DenseKind

PAGE = Path(__file__).resolve().parents[2] / "docs" / "stores" / "search-engines.md"
CORPUS_DOCUMENTS = 80
TRICKY = 'fan "blades" \\ after\nbird strikes {limit}'


def documented(name: str) -> dict:
    """The retriever `name` from the page's Elasticsearch section, exactly as documented."""
    section = PAGE.read_text(encoding="utf-8").split("## Elasticsearch and OpenSearch")[1].split("\n## ")[0]
    for block in re.findall(r"```yaml\n(.*?)```", section, flags=re.DOTALL):
        retrievers = yaml.safe_load(block)["retrievers"]
        if name in retrievers:
            return retrievers[name]
    raise AssertionError(f"{name} is not documented in {PAGE}")


def built(name: str, engine: SearchEngine, context, **changes) -> HttpRetriever:
    params = {**documented(name), "url": engine.url(), **changes}
    kind = params.pop("kind")
    return RETRIEVERS.parsed(name, kind, {key: value for key, value in params.items() if value is not None}, context).build()


@pytest.fixture
def engine():
    with running(SearchEngine(CORPUS)) as server:
        yield server


@pytest.mark.parametrize("name", ["es_match", "es_multi_match"])
def test_a_documented_text_template_sends_a_body_elasticsearch_accepts_and_its_hits_are_read(name, engine, context, monkeypatch):
    monkeypatch.setenv("ES_API_KEY", "es-key-0c4f")
    retriever = built(name, engine, context)
    assert retriever.retrieve("fan blades after bird strikes", 2) == ["d1"]
    assert retriever.retrieve("sea water and flour", 2) == ["d2", "d5"]
    assert retriever.retrieve(TRICKY, 3) == ["d1"]
    sent = engine.bodies[-1]
    question = sent["query"]["match"]["text"]["query"] if name == "es_match" else sent["query"]["multi_match"]["query"]
    assert question == TRICKY and sent["size"] == 3 and sent["_source"] is False


@pytest.mark.slow
def test_the_documented_knn_template_gives_the_dense_kinds_top_3_with_the_same_model(corpus, minilm, context):
    ids, vectors = document_vectors(corpus, minilm)
    dense = DenseKind.parse("dense", {"corpus": corpus.name, **encoder_params(minilm)}, context).build()
    with running(SearchEngine({}, ids, vectors)) as engine:
        retriever = built("es_knn", engine, context, query_encoder=encoder_params(minilm))
        assert [retriever.retrieve(question, 3) for question in QUESTIONS] == dense.retrieve_batch(QUESTIONS, 3)
        knn = engine.bodies[-1]["knn"]
        assert (len(knn["query_vector"]), knn["k"], knn["num_candidates"]) == (384, 3, 100)


def test_a_body_elasticsearch_refuses_fails_the_question_with_its_reason(engine, context):
    retriever = built("es_match", engine, context, headers=None, body_template={"size": "{question}", "query": {"match": {}}})
    with pytest.raises(HttpRetrieverError, match=r"HTTP 400; answer: .*\[size\] must be a non-negative integer"):
        retriever.retrieve("fan blades", 3)
