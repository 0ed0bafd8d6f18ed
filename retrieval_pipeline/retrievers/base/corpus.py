"""The `corpus` parameter of the kinds that read a JSONL corpus (lexical, dense, rerank, and run_file where
one is named), implemented once: checked with the rest of the configuration, and read without building
anything for the label audit (its ids) and for judging files (its texts)."""

from __future__ import annotations

from collections.abc import Collection
from functools import cached_property

from retrieval_pipeline.core.retrieval.corpus import read_document_ids, read_document_texts
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.core.retrieval.retriever_kinds import RetrieverKind


class CorpusKind(RetrieverKind):
    """A kind whose parameters have a `corpus` (None: the kind names no corpus)."""

    corpus_key = ""
    """Appended to `retrievers.<id>` in a corpus error: where the kind's errors name the parameter itself."""

    def corpus(self) -> frozenset[str] | None:
        return self._document_ids

    @cached_property
    def _document_ids(self) -> frozenset[str] | None:
        """Read once: the kind is parsed once per configuration and every set's label check asks."""
        if self.params.corpus is None:
            return None
        return read_document_ids(self.context.resolve(self.params.corpus), self._corpus_at)

    def corpus_texts(self, wanted: Collection[str]) -> dict[str, tuple[str, str]] | None:
        if self.params.corpus is None:
            return None
        return read_document_texts(self.context.resolve(self.params.corpus), wanted, self._corpus_at)

    @property
    def _corpus_at(self) -> str:
        return KindContext.of(self).key + self.corpus_key
