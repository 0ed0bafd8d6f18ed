"""The `corpus` parameter of the kinds that read a JSONL corpus (lexical, dense, rerank, and run_file where
one is named), implemented once: checked with the rest of the configuration, and read without building
anything for the label audit (its ids) and for judging files (its texts)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from retrieval_pipeline.core.retrieval.corpus import read_document_ids, read_document_texts
from retrieval_pipeline.core.retrieval.retriever import BuildContext


class CorpusKind:
    """A kind whose `check_config` returns parameters with a `corpus` (None: the kind names no corpus)."""

    corpus_key = ""
    """Appended to `retrievers.<id>` in a corpus error: where the kind's errors name the parameter itself."""

    @classmethod
    def corpus_document_ids(cls, identifier: str, params: Mapping[str, Any], context: BuildContext) -> frozenset[str] | None:
        settings = cls.check_config(identifier, params, context)
        if settings.corpus is None:
            return None
        return read_document_ids(context.resolve(settings.corpus), f"retrievers.{identifier}{cls.corpus_key}")

    @classmethod
    def corpus_texts(
        cls, identifier: str, params: Mapping[str, Any], context: BuildContext, wanted: Collection[str]
    ) -> dict[str, tuple[str, str]] | None:
        settings = cls.check_config(identifier, params, context)
        if settings.corpus is None:
            return None
        return read_document_texts(context.resolve(settings.corpus), wanted, f"retrievers.{identifier}{cls.corpus_key}")
