"""Reciprocal-rank fusion of other configured retrievers: hybrid search without tuning score scales.

RRF uses ranks only, so members whose scores are incomparable (BM25, cosine, a remote service) combine
without normalisation. Members are named retrievers of the same configuration, built through it.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from pydantic import Field, field_validator

from retrieval_pipeline.core.retrieval.kinds import KindContext, KindParams
from retrieval_pipeline.core.retrieval.retriever import BatchRetriever, Retriever, VersionedIndex, batch_as_lists
from retrieval_pipeline.core.retrieval.retriever_kinds import RetrieverKind
from retrieval_pipeline.retrievers.base.members import build_members, check_known


class FusionParams(KindParams):
    retrievers: list[str] = Field(min_length=2)
    k: float = Field(60.0, ge=0)
    weights: list[float] | None = None
    depth: int | None = Field(None, ge=1)

    @field_validator("retrievers")
    @classmethod
    def _distinct(cls, identifiers: list[str]) -> list[str]:
        repeated = sorted({identifier for identifier in identifiers if identifiers.count(identifier) > 1})
        if repeated:
            raise ValueError(f"{', '.join(repeated)} listed more than once; use `weights` to favour a member")
        return identifiers


class FusionKind(RetrieverKind):
    """`kind: fusion`: the members named and weighted consistently, checked; built through the configuration."""

    Params = FusionParams

    def checked(self) -> None:
        settings, kind = self.params, KindContext.of(self)
        if settings.weights is not None and len(settings.weights) != len(settings.retrievers):
            raise kind.invalid(f"{len(settings.weights)} weights for {len(settings.retrievers)} retrievers", "weights")
        check_known(settings.retrievers, kind, "retrievers")

    def build(self) -> FusionRetriever:
        members = build_members("fusion", self.params.retrievers, KindContext.of(self), "retrievers")
        return FusionRetriever(self.name, self.params, members)

    def echoed(self) -> tuple[str, ...]:
        """Its members: a fused ranking repeats what they rank, so it is no second opinion beside them."""
        return tuple(self.params.retrievers)


class FusionRetriever:
    """Each member contributes weight / (k + rank) for every document it returns; the sum ranks them."""

    def __init__(self, identifier: str, params: FusionParams, members: Sequence[Retriever]):
        self.identifier = identifier
        self.params = params
        self.members = tuple(members)
        self._weights = tuple(params.weights or [1.0] * len(members))
        # The runner takes the batch path when `retrieve_batch` exists, so it exists only when every
        # member can answer in batches; `index_version` likewise only when some member has a version.
        if all(isinstance(member, BatchRetriever) for member in self.members):
            self.retrieve_batch = self._retrieve_batch
        if any(isinstance(member, VersionedIndex) for member in self.members):
            self.index_version = self._index_version

    def retrieve(self, question: str, limit: int) -> list[str]:
        depth = self.params.depth or limit
        return self._fuse([member.retrieve(question, depth) for member in self.members], limit)

    def _retrieve_batch(self, questions: Sequence[str], limit: int) -> list[list[str]]:
        depth = self.params.depth or limit
        per_member = [batch_as_lists(member.retrieve_batch(questions, depth)) for member in self.members]
        return [self._fuse([rankings[row] for rankings in per_member], limit) for row in range(len(questions))]

    def _index_version(self) -> str:
        """Changes when any member's index does, so a member's rebuild also re-evaluates the fusion."""
        versions = [
            f"{member.identifier}={member.index_version()}" for member in self.members if isinstance(member, VersionedIndex)
        ]
        return hashlib.sha256("\n".join(versions).encode()).hexdigest()[:16]

    def _fuse(self, rankings: Sequence[Sequence[str]], limit: int) -> list[str]:
        """Ranks count per distinct document (a chunk store's repeats count once, at the first), as in scoring.

        `fsum` makes equal sums exactly equal whatever the order of their terms, so ties fall to first
        appearance (members in configured order, each best first), which dict order preserves.
        """
        contributions: dict[str, list[float]] = {}
        for ranking, weight in zip(rankings, self._weights):
            distinct = dict.fromkeys(document_id for document_id in ranking if document_id)
            for rank, document_id in enumerate(distinct, start=1):
                contributions.setdefault(document_id, []).append(weight / (self.params.k + rank))
        fused = sorted(contributions, key=lambda document_id: -math.fsum(contributions[document_id]))
        return fused[:limit]
