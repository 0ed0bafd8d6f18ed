"""An OpenAI-compatible embeddings endpoint: OpenAI, Azure OpenAI, Ollama, vLLM and
text-embeddings-inference all answer `POST {"model", "input": [texts]}` with
`{"data": [{"index", "embedding"}]}`, so one encoder measures any of them.

Requests follow the HTTP kind's rules (`http.client.JsonService`: one deadline per attempt, retries of
transient failures, an unreachable service raising what the runner's fail-fast counts, secret headers
from the environment scrubbed from every message). Azure's `api-key` header and `?api-version=` are a
`headers` entry and the url. The model cannot be checksummed from here: the vectors are keyed by the
url, the model name and an optional `version`, which is what a user changes when the model behind a
name does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.retrievers.encoders.external import VectorWidth, checked_vectors, identity_fingerprints, in_batches
from retrieval_pipeline.retrievers.http.client import JsonService
from retrieval_pipeline.retrievers.http.params import HttpTransportParams, resolved_headers


class OpenAIEncoderParams(HttpTransportParams):
    kind: Literal["openai"]
    model: str = Field(min_length=1, description="the model name the endpoint serves")
    dimensions: int | None = Field(None, ge=1, description="sent when set: models that can shorten their vectors")
    version: str | None = Field(
        None, min_length=1, description="put into the vector cache key: change it when the model behind the name changes"
    )

    def open(self, kind: KindContext, normalize: bool, batch_size: int) -> OpenAIEncoder:
        headers = resolved_headers(self, kind.under("encoder."))
        return OpenAIEncoder(JsonService(kind.identifier, self, headers), self, normalize, batch_size)


class OpenAIEncoder:
    """`batch_size` texts per request, up to `concurrency` requests in flight."""

    runtime = "openai"

    def __init__(self, service: JsonService, params: OpenAIEncoderParams, normalize: bool, batch_size: int):
        self.fail_fast_after = params.fail_fast_after
        self.concurrency = params.concurrency
        # What is sent besides the texts changes the vectors (extra_body may hold `input_type`, say); the
        # headers never enter the key: they hold the secrets, and a new key does not change the model.
        identity = params.model_dump(include={"url", "model", "dimensions", "version", "extra_body", "extra_params"})
        self.model_fingerprint, self.fingerprint = identity_fingerprints("openai", normalize, **identity)
        self._service = service
        self._params = params
        self._normalize = normalize
        self._batch_size = batch_size
        self._width = VectorWidth(params.dimensions)
        self._endpoint = f"POST {params.url.split('?', 1)[0]}"  # its query may hold a key

    def retries(self) -> dict[str, int]:
        return self._service.retries()

    def dimension(self) -> int | None:
        return self._width.known()

    def encode(self, texts: Sequence[str]):
        return in_batches(texts, self._batch_size, self._encode_batch, self.concurrency)

    def _fault(self, problem: str) -> Exception:
        """Every answer checked where it arrives, and named by the endpoint that gave it."""
        return self._service.fault(f"{self._endpoint}: {problem}")

    def _encode_batch(self, texts: list[str]):
        params = self._params
        body: dict[str, Any] = {**(params.extra_body or {}), "model": params.model, "input": texts, "encoding_format": "float"}
        if params.dimensions is not None:
            body["dimensions"] = params.dimensions
        answer = self._service.request_json("POST", params.url, query=params.extra_params, body=body)
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list):
            raise self._fault(f"the embeddings answer has no list at 'data': {self._service.preview(answer)}")
        by_index: dict[int, Any] = {}
        for item in data:
            index = item.get("index") if isinstance(item, dict) else None
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(texts) or index in by_index:
                wanted = f"an object with a distinct 'index' below {len(texts)}"
                raise self._fault(f"an embeddings item is not {wanted}: {self._service.preview(item)}")
            by_index[index] = item.get("embedding")
        if len(by_index) != len(texts):
            raise self._fault(f"the embeddings answer holds {len(by_index)} vectors for the {len(texts)} texts sent")
        rows = [by_index[index] for index in range(len(texts))]
        return checked_vectors(rows, len(texts), self._normalize, self._fault, self._width)
