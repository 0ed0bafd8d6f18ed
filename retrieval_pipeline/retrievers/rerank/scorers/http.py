"""A rerank endpoint asked over HTTP, in the shape Cohere, Jina and text-embeddings-inference share.

All three take a POST of the question and the document texts and answer each document's position in the
request with its relevance: Cohere and Jina as `{"results": [{"index", "relevance_score"}]}` from
`{"query", "documents", "top_n"}`, text-embeddings-inference as a bare list of `{"index", "score"}` from
`{"query", "texts"}`. The field names and the results' path are parameters; the defaults are Cohere's and
Jina's. Requests follow the HTTP kind's rules (`http.client.JsonService`: one deadline per attempt,
retries, fail-fast, secret headers from the environment scrubbed from every message).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.retrievers.http.client import JsonService, at_path
from retrieval_pipeline.retrievers.http.params import HttpTransportParams, resolved_headers


class HttpScorerParams(HttpTransportParams):
    kind: Literal["http"]
    query_field: str = Field("query", min_length=1)
    documents_field: str = Field("documents", min_length=1, description="text-embeddings-inference: texts")
    top_n_field: str | None = Field("top_n", min_length=1, description="null: send none (text-embeddings-inference)")
    results_path: str = Field("results", description="dotted path to the results; empty: the answer is the list")
    index_field: str = Field("index", min_length=1)
    score_field: str = Field("relevance_score", min_length=1, description="text-embeddings-inference: score")

    def check(self, kind: KindContext) -> None:
        """The parameters' own validation is all: nothing is asked before the first question."""

    def build(self, kind: KindContext) -> HttpScorer:
        return HttpScorer(kind.identifier, self, resolved_headers(self, kind.under("scorer.")))


class HttpScorer:
    """One request per question with all its candidates; `concurrency` requests in flight at most."""

    def __init__(self, identifier: str, params: HttpScorerParams, headers: dict[str, str]):
        self.concurrency = params.concurrency
        self.fail_fast_after = params.fail_fast_after
        self._params = params
        self._service = JsonService(identifier, params, headers)

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        params = self._params
        body = {**(params.extra_body or {}), params.query_field: question, params.documents_field: list(texts)}
        if params.top_n_field is not None:
            body[params.top_n_field] = len(texts)
        document = self._service.request_json("POST", params.url, query=params.extra_params, body=body)
        results = at_path(document, params.results_path)
        if not isinstance(results, list):
            where = f"'{params.results_path}'" if params.results_path else "the top level"
            raise self._service.fault(f"the rerank answer has no list at {where}: {self._service.preview(document)}")
        scores: dict[int, float] = {}
        for result in results:
            index, score = at_path(result, params.index_field), at_path(result, params.score_field)
            if not _is_int(index) or not 0 <= index < len(texts) or index in scores or not _is_finite(score):
                wanted = f"a distinct '{params.index_field}' below {len(texts)} and a finite '{params.score_field}'"
                raise self._service.fault(f"a rerank result is not {wanted}: {self._service.preview(result)}")
            scores[index] = float(score)
        if len(scores) != len(texts):
            raise self._service.fault(f"the rerank answer scored {len(scores)} of the {len(texts)} documents sent")
        return [scores[index] for index in range(len(texts))]

    def retries(self) -> dict[str, int]:
        return self._service.retries()

    def version(self) -> str:
        """The endpoint and what is sent with every request (a model name in `extra_body`): the service's
        model cannot be seen from here, so naming a new one is what changes the version."""
        params = self._params
        sent = json.dumps(
            {"url": params.url, "extra_body": params.extra_body, "extra_params": params.extra_params}, sort_keys=True
        )
        return f"http:{hashlib.sha256(sent.encode()).hexdigest()[:16]}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
