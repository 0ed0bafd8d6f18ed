"""The build context bound to the entry at hand: how a built-in kind's helpers refuse a parameter.

A kind binds its name and context once and hands the pair to its helpers (the encoder's, the members',
the headers'), so none needs the identifier threaded through, a nested setting's refusal names its whole
path (`under`), and a refusal always names the configuration, the entry and its key (`retrievers.NAME`,
`judges.NAME`, `generators.NAME`), so judges and generators share the retrievers' helpers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.kinds import Kind
from retrieval_pipeline.core.retrieval.retriever import BuildContext


@dataclass(frozen=True)
class KindContext:
    """`within` is the key the parameters at hand sit under (`query_encoder.` on the http kind), so a
    refusal of a nested setting names its whole path."""

    identifier: str
    build: BuildContext
    within: str = ""
    section: str = "retrievers"

    @classmethod
    def of(cls, kind: Kind) -> KindContext:
        return cls(kind.name, kind.context, section=kind.section)

    @property
    def key(self) -> str:
        return f"{self.section}.{self.identifier}"

    def under(self, prefix: str) -> KindContext:
        return replace(self, within=self.within + prefix)

    def invalid(self, message: str, field: str | None = None) -> InvalidInputError:
        return InvalidInputError(message, source=self.build.source, key=self.key, field=self.within + field if field else None)

    def resolve(self, path: str | Path) -> Path:
        return self.build.resolve(path)
