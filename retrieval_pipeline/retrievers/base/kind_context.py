"""The build context bound to the retriever being built: the one way a built-in kind refuses a parameter.

The kind contract (`from_config(identifier, params, context)`) stays as third-party kinds know it; a
built-in kind binds the two at its door, so no helper needs the identifier threaded through, nor a
`partial` to name the retriever, and a refusal always names the configuration, the retriever and its key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.retriever import BuildContext, RetrieverParams

Params = TypeVar("Params", bound=RetrieverParams)


@dataclass(frozen=True)
class KindContext:
    """`within` is the key the parameters at hand sit under (`query_encoder.` on the http kind), so a
    refusal of a nested setting names its whole path."""

    identifier: str
    build: BuildContext
    within: str = ""

    @property
    def key(self) -> str:
        return f"retrievers.{self.identifier}"

    def under(self, prefix: str) -> KindContext:
        return replace(self, within=self.within + prefix)

    def invalid(self, message: str, field: str | None = None) -> InvalidInputError:
        return self.build.invalid(self.identifier, message, self.within + field if field else None)

    def parse(self, params_class: type[Params], params: Mapping[str, Any]) -> Params:
        return params_class.parse(self.identifier, params, self.build)

    def resolve(self, path: str | Path) -> Path:
        return self.build.resolve(path)
