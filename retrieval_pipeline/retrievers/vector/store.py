"""What the vector-store kinds (pgvector, qdrant) share: a secret named by its environment variable, the
query encoder of the `dense` kind, and the service settings of the HTTP kind (concurrency, timeout,
fail-fast), so a store is configured the way the other remote kinds are.

A store holds the document vectors already; the kind only embeds each question with the same encoder
settings the documents were embedded with and asks the store for its nearest documents.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from retrieval_pipeline.core.base import secrets
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.retriever import BuildContext, RetrieverFault, ServiceUnreachable
from retrieval_pipeline.retrievers.encoders import Encoder
from retrieval_pipeline.retrievers.encoders.query_encoder import QueryEncoderParams, checked_encoder, opened_encoder

IDENTIFIER_PATTERN = r"^[A-Za-z_][A-Za-z0-9_$]*$"


class EnvSecret(BaseModel):
    """`{env: VARIABLE}`: the value is read from the environment when the retriever is built, never from a file."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    env: str = Field(min_length=1)

    def value(self, invalid: Callable[[str], InvalidInputError]) -> str:
        secret = secrets.from_environment(self.env)
        if secret is None:
            raise invalid(f"the environment variable {self.env} is not set or empty")
        return secret.removesuffix("\n").removesuffix("\r")


class StoreParams(QueryEncoderParams):
    timeout_seconds: float = Field(10.0, gt=0, description="caps connecting and each search")
    concurrency: int = Field(4, ge=1, description="questions asked at once, one connection each")
    fail_fast_after: int = Field(10, ge=0, description="stop when this many first questions cannot connect; 0: never")


class StoreFault(RetrieverFault):
    """A search the store refused or answered wrongly; asking again would not mend it."""


class StoreUnreachable(StoreFault, ServiceUnreachable):
    """No connection to the store: the runner's fail-fast counts it."""


def require_modules(modules: Sequence[str], extra: str, identifier: str, context: BuildContext) -> None:
    """A missing client library is refused when the configuration is checked, naming the extra to install."""
    missing = [module for module in modules if importlib.util.find_spec(module) is None]
    if missing:
        message = f"{', '.join(missing)} not installed: pip install 'retrieval-pipeline[{extra}]'"
        raise context.invalid(identifier, message, "kind")


def query_vector(encoder: Encoder, params: QueryEncoderParams, question: str):
    """The question's vector, prefixed as the configuration says (documents get their own prefix when embedded)."""
    return encoder.encode([params.query_prefix + question])[0]


def store_encoder(params: QueryEncoderParams, identifier: str, context: BuildContext) -> Encoder:
    """The question encoder a store kind embeds with, opened as the `dense` kind opens it."""
    return opened_encoder(params, checked_encoder(params, identifier, context), identifier, context)
