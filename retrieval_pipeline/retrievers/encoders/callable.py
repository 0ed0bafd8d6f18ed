"""Any embedding code at all, as `package.module:function` taking a list of texts and returning one
vector per text (a list of lists or a 2-D array), for what neither a local model nor an endpoint covers.

The function is imported when the configuration is checked, so a wrong name is refused before a run;
what it returns is checked on every call, since a wrong shape would otherwise surface as a confusing
search error or, worse, as silently wrong rankings. Its code cannot be checksummed reliably (it may
load anything), so the vectors are keyed by the dotted name and an optional `version`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import Field

from retrieval_pipeline.core.retrieval.kinds import DOTTED_PATTERN, KindContext, KindParams, imported_callable
from retrieval_pipeline.core.retrieval.retriever import RetrieverFault
from retrieval_pipeline.retrievers.encoders.external import VectorWidth, checked_vectors, identity_fingerprints, in_batches


class CallableEncoderParams(KindParams):
    kind: Literal["callable"]
    function: str = Field(pattern=DOTTED_PATTERN, description="package.module:function")
    version: str | None = Field(
        None, min_length=1, description="put into the vector cache key: change it when the function's vectors change"
    )

    def resolve(self, kind: KindContext) -> Callable[[list[str]], Any]:
        return imported_callable(self.function, kind, "encoder.function")

    def open(self, kind: KindContext, normalize: bool, batch_size: int) -> CallableEncoder:
        return CallableEncoder(self, self.resolve(kind), normalize, batch_size)


class CallableEncoder:
    """The function called once per `batch_size` texts, in order."""

    runtime = "callable"
    concurrency = 1

    def __init__(self, params: CallableEncoderParams, function: Callable[[list[str]], Any], normalize: bool, batch_size: int):
        identity = params.model_dump(include={"function", "version"})
        self.model_fingerprint, self.fingerprint = identity_fingerprints("callable", normalize, **identity)
        self._name = params.function
        self._function = function
        self._normalize = normalize
        self._batch_size = batch_size
        self._width = VectorWidth()

    def dimension(self) -> int | None:
        return self._width.known()

    def encode(self, texts: Sequence[str]):
        return in_batches(texts, self._batch_size, self._encode_batch)

    def _encode_batch(self, texts: list[str]):
        return checked_vectors(self._function(texts), len(texts), self._normalize, self._fault, self._width)

    def _fault(self, problem: str) -> RetrieverFault:
        return RetrieverFault(f"encoder function {self._name}: {problem}")
