"""What every kind that asks a remote service shares (an HTTP search, an embeddings or rerank endpoint, a
vector store): the settings of asking (how long, how many at once, when to give up on the run) and the one
way a secret is configured, `{env: VARIABLE}`, so no configuration file, log line or Dagster metadata
carries one.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from retrieval_pipeline.core.base import secrets
from retrieval_pipeline.core.retrieval.kinds import KindContext, KindParams


class EnvSecret(BaseModel):
    """`{env: VARIABLE}`: the value is read from the environment when the retriever is built, never from a
    file, and remembered as a secret to scrub (core.secrets). A secret read from a file usually ends with
    one newline, so a single trailing line ending is dropped."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    env: str = Field(min_length=1)

    def value(self, kind: KindContext, field: str) -> str:
        secret = secrets.from_environment(self.env)
        if secret is None:
            raise kind.invalid(f"the environment variable {self.env} is not set or empty", field)
        return secret.removesuffix("\n").removesuffix("\r")


class ServiceParams(KindParams):
    """How a service is asked, whichever protocol: the runner reads `concurrency` and `fail_fast_after`
    off the retriever (`ConcurrentRetriever`, `FailFast`)."""

    timeout_seconds: float = Field(
        10.0,
        gt=0,
        description="caps each attempt whole (HTTP: name lookup, connect, headers and body; a store: connecting and each search)",
    )
    concurrency: int = Field(4, ge=1, description="questions asked at once, one connection each")
    fail_fast_after: int = Field(10, ge=0, description="stop when this many first questions cannot connect; 0: never")
