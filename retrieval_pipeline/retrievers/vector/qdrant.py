"""A Qdrant collection, asked as production asks it: the question embedded with the `dense` kind's
encoder settings, one `query_points` per question with the configured filter, the document id read from
each point's payload (Qdrant point ids are integers or UUIDs, so the id a label names lives there).

`url` reaches a server (API key from the environment); `path` opens the client's local mode, the same
API in process. A local folder can be open only once per process, so local clients are shared per
folder and closed at exit. The index version is read from the collection's info. qdrant-client is
imported only when the retriever is checked or built (`pip install 'retrieval-pipeline[qdrant]'`).
"""

from __future__ import annotations

import atexit
import hashlib
import json
from functools import cached_property
from typing import Any

from pydantic import Field, ValidationError, model_validator

from retrieval_pipeline.core.base.errors import quoted, validation_problem
from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.core.retrieval.retriever_kinds import RetrieverKind
from retrieval_pipeline.retrievers.base.process_cache import ProcessCache
from retrieval_pipeline.retrievers.base.service import EnvSecret
from retrieval_pipeline.retrievers.encoders import Encoder, EncoderSettings
from retrieval_pipeline.retrievers.encoders.query_encoder import checked_encoder, opened_encoder
from retrieval_pipeline.retrievers.vector.store import StoreFault, StoreParams, StoreUnreachable, query_vector, require_modules

LOCAL_CLIENTS: ProcessCache[Any] = ProcessCache()


class QdrantParams(StoreParams):
    url: str | None = Field(None, pattern=r"^https?://")
    api_key: EnvSecret | None = None
    path: str | None = Field(None, min_length=1, description="a local-mode folder, instead of url")
    collection: str = Field(min_length=1)
    id_payload_field: str = Field(min_length=1, description="the payload key holding the document id")
    vector_name: str | None = Field(None, min_length=1, description="a named vector of the collection")
    filter: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_place(self) -> QdrantParams:
        if (self.url is None) == (self.path is None):
            raise ValueError("give exactly one of url (a Qdrant server) and path (local mode)")
        if self.api_key is not None and self.url is None:
            raise ValueError("api_key goes with url: local mode has no server to authenticate to")
        return self


class QdrantKind(RetrieverKind):
    """`kind: qdrant`: parameters, the client library, the filter's shape and the encoder files checked,
    connecting nowhere; the collection and its vectors checked when built."""

    Params = QdrantParams

    def checked(self) -> None:
        settings, kind = self.params, KindContext.of(self)
        require_modules(("qdrant_client",), "qdrant", kind)
        try:
            _filter(settings)
        except ValidationError as error:
            from qdrant_client import models

            location, problem = validation_problem(error, models.Filter)
            raise kind.invalid(f"not a Qdrant filter: {problem}", ".".join(("filter", *location))) from None
        if settings.path is not None and not kind.resolve(settings.path).is_dir():
            raise kind.invalid(f"local-mode folder {kind.resolve(settings.path)} does not exist", "path")
        self.encoding: EncoderSettings | None = checked_encoder(settings, kind)

    def build(self) -> QdrantRetriever:
        settings, kind = self.params, KindContext.of(self)
        retriever = QdrantRetriever(self.name, settings, opened_encoder(settings, self.encoding, kind), _client(settings, kind))
        try:
            info = retriever._info()
        except StoreFault as error:
            raise kind.invalid(str(error), "url" if isinstance(error, StoreUnreachable) else "collection") from None
        problem = _vector_problem(settings, info.config.params.vectors)
        if problem is not None:
            raise kind.invalid(problem, "vector_name")
        return retriever

    def corpus(self) -> frozenset[str]:
        return self._document_ids

    @cached_property
    def _document_ids(self) -> frozenset[str]:
        """Every point's document id (under `filter`), scrolled through without vectors."""
        settings = self.params
        retriever = QdrantRetriever(self.name, settings, None, _client(settings, KindContext.of(self)))
        ids: set[str] = set()
        offset = None
        while True:
            points, offset = retriever._asked(
                "scroll", settings.collection, scroll_filter=retriever._filter, limit=1024, offset=offset,
                with_payload=[settings.id_payload_field], with_vectors=False,
            )  # fmt: skip
            ids.update(retriever._document_id(point) for point in points)
            if offset is None:
                return frozenset(ids)


class QdrantRetriever:
    """The collection's nearest points, best first, as document ids."""

    def __init__(self, identifier: str, params: QdrantParams, encoder: Encoder | None, client: Any):
        self.identifier = identifier
        self.params = params
        self.concurrency = params.concurrency if params.url else 1  # local mode is one process's files
        self.fail_fast_after = params.fail_fast_after
        self._encoder = encoder
        self._client = client
        self._filter = _filter(params)

    def retrieve(self, question: str, limit: int) -> list[str]:
        if limit <= 0:
            return []
        params = self.params
        answer = self._asked(
            "query_points", params.collection, query=query_vector(self._encoder, params, question).tolist(),
            using=params.vector_name, query_filter=self._filter, limit=limit, with_payload=[params.id_payload_field],
        )  # fmt: skip
        return [self._document_id(point) for point in answer.points]

    def index_version(self) -> str:
        """The collection an alias points to (a blue/green rebuild switches it), its creation time (a
        server's, when recreated), point count, configuration and metadata, as one short checksum after
        the name and the count."""
        name = self._resolved_name()
        info = self._info(name)
        described = info.model_dump(mode="json", include={"created_at", "points_count", "config", "metadata"})
        digest = hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:12]
        return f"{name}, {info.points_count} points, {digest}"

    def build_report(self) -> dict[str, str | int | float | bool]:
        return {
            "collection": self.params.collection,
            "mode": "server" if self.params.url else "local",
            "runtime": self._encoder.runtime,
        }

    def __repr__(self) -> str:
        return f"QdrantRetriever({self.identifier!r}, collection={self.params.collection})"

    def _resolved_name(self) -> str:
        aliases = self._asked("get_aliases").aliases
        return next((a.collection_name for a in aliases if a.alias_name == self.params.collection), self.params.collection)

    def _info(self, name: str | None = None):
        return self._asked("get_collection", name or self.params.collection)

    def _document_id(self, point) -> str:
        value = (point.payload or {}).get(self.params.id_payload_field)
        if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
            where = f"collection {self.params.collection}, point {point.id}"
            raise StoreFault(f"{where} has no document id at payload field '{self.params.id_payload_field}'")
        return str(value)

    def _asked(self, method: str, *arguments, **keywords):
        """The client's call; a failure to connect is unreachable, anything else names the collection."""
        import httpx
        from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

        try:
            return getattr(self._client, method)(*arguments, **keywords)
        except (ResponseHandlingException, httpx.TransportError) as error:
            cause = error.__cause__ or error
            raise StoreUnreachable(scrub(f"cannot reach Qdrant for collection {self.params.collection}: {cause}")) from None
        except (UnexpectedResponse, ValueError) as error:
            raise StoreFault(scrub(f"collection {self.params.collection}: {str(error).splitlines()[0]}")) from None


def _filter(params: QdrantParams):
    """The client's own model checks the filter; the client is imported only when there is one."""
    if params.filter is None:
        return None
    from qdrant_client import models

    return models.Filter.model_validate(params.filter)


def _vector_problem(params: QdrantParams, vectors: Any) -> str | None:
    """What is wrong with `vector_name` for a collection whose vectors are `vectors` (its one unnamed
    vector's settings, or its named vectors by name), found when the retriever is built rather than as
    every question failing."""
    collection, name = params.collection, params.vector_name
    if not isinstance(vectors, dict):
        return (
            None if name is None else f"collection {collection} has one unnamed vector, no {quoted(name)}; leave vector_name out"
        )
    if name in vectors:
        return None
    names = ", ".join(sorted(vectors)) or "none"
    if name is None:
        return f"collection {collection} has named vectors only; give vector_name, one of: {names}"
    return f"collection {collection} has no vector {quoted(name)}; its vectors: {names}"


def _client(params: QdrantParams, kind: KindContext):
    from qdrant_client import QdrantClient

    if params.url is not None:
        api_key = None if params.api_key is None else params.api_key.value(kind, "api_key.env")
        return QdrantClient(
            url=params.url, api_key=api_key, timeout=max(1, round(params.timeout_seconds)), check_compatibility=False
        )
    folder = str(kind.resolve(params.path).resolve())
    try:
        return LOCAL_CLIENTS.get(folder, lambda: QdrantClient(path=folder))
    except RuntimeError as error:  # the folder's lock: another process has it open
        raise kind.invalid(str(error), "path") from None


@atexit.register
def close_local_clients() -> None:
    """Local mode writes its files on close; a test (or a process) that reopens a folder closes first."""
    for client in LOCAL_CLIENTS.clear():
        client.close()
