"""Ask a JSON search service over HTTP, so a deployed search stack is measured exactly as users reach it.

Configuration says where the question goes and where the hits and their ids sit in the response, so
most services need no code. Requests, retries, fail-fast and the scrubbing of secret header values
are `http.client.JsonService`'s, shared with every adapter that asks a JSON service.
`index_version` exists only on `VersionedHttpRetriever` (when `version_url` is set): the core's runtime
protocol only checks that the method exists, so every instance having it would claim the capability.
Every instance receives the conversation before a turn (`ConversationalRetriever`), which a
`body_template` places with `{history}`; without one the service is sent the query alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.core.retrieval.retriever import ChatMessages, document_id_from_chunk
from retrieval_pipeline.core.retrieval.retriever_kinds import RetrieverKind
from retrieval_pipeline.retrievers.encoders import Encoder, EncoderSettings
from retrieval_pipeline.retrievers.encoders.query_encoder import opened_encoder
from retrieval_pipeline.retrievers.http.body_template import HttpSearchParams, checked_template, filled
from retrieval_pipeline.retrievers.http.client import JsonService, at_path
from retrieval_pipeline.retrievers.http.params import resolved_headers
from retrieval_pipeline.retrievers.vector.store import query_vector


class HttpKind(RetrieverKind):
    """`kind: http`: the request's shape and, for a template's `{vector}`, the local encoder's settings
    checked; the headers read from the environment and the encoder opened when built."""

    Params = HttpSearchParams

    def checked(self) -> None:
        parsed, kind = self.params, KindContext.of(self)
        if parsed.method == "GET" and parsed.extra_body is not None:
            raise kind.invalid("a GET request has no body; use extra_params", "extra_body")
        if (parsed.version_url is None) != (parsed.version_path is None):
            raise kind.invalid("version_url and version_path go together", "version_path")
        self.encoding: EncoderSettings | None = checked_template(parsed, kind)

    def build(self) -> HttpRetriever:
        parsed, kind = self.params, KindContext.of(self)
        made = VersionedHttpRetriever if parsed.version_url is not None else HttpRetriever
        headers = resolved_headers(parsed, kind)
        if parsed.query_encoder is None:
            return made(self.name, parsed, headers)
        return made(self.name, parsed, headers, opened_encoder(parsed.query_encoder, self.encoding, kind.under("query_encoder.")))


class HttpRetriever:
    """One request per question; `concurrency` tells the runner how many questions to ask at once."""

    def __init__(self, identifier: str, params: HttpSearchParams, headers: Mapping[str, str], encoder: Encoder | None = None):
        self.identifier = identifier
        self.concurrency = params.concurrency
        self.fail_fast_after = params.fail_fast_after
        self._params = params
        self._service = JsonService(identifier, params, headers)
        self._encoder = encoder

    def retries(self) -> dict[str, int]:
        """Its service's retries since the last call, by cause (`CountsRetries`): one line each per run."""
        return self._service.retries()

    def __repr__(self) -> str:
        params, names = self._params, ", ".join(self._params.headers)
        return f"{type(self).__name__}({self.identifier!r}, {params.method} {params.url}, headers=[{names}])"

    def retrieve(self, question: str, limit: int) -> list[str]:
        return self.retrieve_in_conversation(question, (), limit)

    def retrieve_in_conversation(self, question: str, history: ChatMessages, limit: int) -> list[str]:
        params = self._params
        fields: dict[str, Any] = {params.question_field: question}
        if params.limit_field is not None:
            fields[params.limit_field] = limit
        if params.body_template is not None:
            vector = None if self._encoder is None else query_vector(self._encoder, params.query_encoder, question).tolist()
            body = filled(params.body_template, question, limit, vector, history)
            document = self._service.request_json("POST", params.url, query=params.extra_params, body=body)
        elif params.method == "GET":
            document = self._service.request_json("GET", params.url, query={**(params.extra_params or {}), **fields})
        else:
            body = {**(params.extra_body or {}), **fields}
            document = self._service.request_json("POST", params.url, query=params.extra_params, body=body)
        hits = at_path(document, params.results_path)
        if not isinstance(hits, list):
            where = f"'{params.results_path}'" if params.results_path else "the top level"
            raise self._service.fault(f"the response has no list at {where}: {self._service.preview(document)}")
        ids = [self._hit_id(hit, position) for position, hit in enumerate(hits[:limit], start=1)]
        if params.chunk_separator is None:
            return ids
        return [document_id_from_chunk(chunk_id, params.chunk_separator) for chunk_id in ids]

    def _hit_id(self, hit: Any, position: int) -> str:
        value = hit if self._params.id_field is None else at_path(hit, self._params.id_field)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        wanted = "a document-id string" if self._params.id_field is None else f"an id at '{self._params.id_field}'"
        raise self._service.fault(f"hit {position} is not {wanted}: {self._service.preview(hit)}")


class VersionedHttpRetriever(HttpRetriever):
    """An HTTP retriever whose service reports the version of the index it serves."""

    def index_version(self) -> str:
        params = self._params
        document = self._service.request_json("GET", params.version_url)
        version = at_path(document, params.version_path)
        if isinstance(version, bool) or not isinstance(version, (str, int, float)) or version == "":
            raise self._service.fault(
                f"{params.version_url} has no version at '{params.version_path}': {self._service.preview(document)}"
            )
        return str(version)
