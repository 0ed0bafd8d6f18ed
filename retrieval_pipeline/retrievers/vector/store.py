"""What the vector-store kinds (pgvector, qdrant) share: the query encoder of the `dense` kind and the
service settings of every remote kind (timeout, concurrency, fail-fast), so a store is configured the way
the other remote kinds are.

A store holds the document vectors already; the kind only embeds each question with the same encoder
settings the documents were embedded with and asks the store for its nearest documents.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_pipeline.core.base.extras import missing_extra
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.core.retrieval.retriever import RetrieverFault, ServiceUnreachable
from retrieval_pipeline.retrievers.base.service import ServiceParams
from retrieval_pipeline.retrievers.encoders import Encoder
from retrieval_pipeline.retrievers.encoders.query_encoder import QueryEncoderParams

IDENTIFIER_PATTERN = r"^[A-Za-z_][A-Za-z0-9_$]*$"


class StoreParams(ServiceParams, QueryEncoderParams):
    """The encoder settings first, then the service's, as a store's parameters have always been ordered."""


class StoreFault(RetrieverFault):
    """A search the store refused or answered wrongly; asking again would not mend it."""


class StoreUnreachable(StoreFault, ServiceUnreachable):
    """No connection to the store: the runner's fail-fast counts it."""


def require_modules(modules: Sequence[str], extra: str, kind: KindContext) -> None:
    """A missing client library is refused when the configuration is checked, naming the extra to install."""
    missing = missing_extra(modules, extra)
    if missing:
        raise kind.invalid(missing, "kind")


def query_vector(encoder: Encoder, params: QueryEncoderParams, question: str):
    """The question's vector, prefixed as the configuration says (documents get their own prefix when embedded)."""
    return encoder.encode([params.query_prefix + question])[0]
