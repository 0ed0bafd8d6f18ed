"""What a configured retriever's kind answers, and where kinds come from: the entry-point group third
parties use too, loaded only when asked for.

A `RetrieverKind` is one entry of `retrievers:` with its parameters checked once (`parse`): it builds the
retriever and answers, through methods with defaults, what the project asks without building anything
(the documents it can return, the retrievers it repeats, how it embeds a question). `RETRIEVERS` finds,
parses and builds them, as every family of kinds is (kinds.py).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, ClassVar

from retrieval_pipeline.core.retrieval.kinds import Kind, KindFamily, ParamsT
from retrieval_pipeline.core.retrieval.retriever import RETRIEVER_KINDS_GROUP, Retriever

QuestionEncoder = Callable[[Sequence[str]], Any]


class RetrieverKind(Kind[ParamsT, Retriever]):
    """One entry of `retrievers:`, refusals naming `retrievers.NAME`; `build` makes the retriever (the
    `Retriever` protocol: `retrieve`, optionally `retrieve_batch`, `index_version`, `build_report`).

    The other questions are asked without building anything, and a kind overrides those it can answer.
    """

    section = "retrievers"
    embeds_questions: ClassVar[bool] = False
    """Whether `question_encoder` gives an encoder, asked of the class so no model is loaded to know it."""
    shards_document_vectors: ClassVar[bool] = False
    """Whether its document vectors may be encoded in shards, one Dagster partition each: such a kind also
    answers `shard_count(name, raw, context)`, with nothing loaded, and `encode_shard(index)` (the dense kind)."""

    def corpus(self) -> frozenset[str] | None:
        """The documents the retriever can return, read without building an index; None when the kind
        cannot know, so the label audit can tell a label naming no document from one a retriever missed."""
        return None

    def corpus_texts(self, wanted: Collection[str]) -> Mapping[str, tuple[str, str]] | None:
        """(title, text) of the wanted documents; None when the kind cannot know, so a judging file still
        lists the candidate by id."""
        return None

    def echoed(self) -> tuple[str, ...]:
        """The retrievers of the configuration whose rankings this one repeats (a fusion: its members): the
        label audit does not count their agreement as two opinions."""
        return ()

    def question_encoder(self) -> QuestionEncoder | None:
        """Texts to vectors as the retriever embeds a question, with no corpus encoded: what `coverage`
        compares logged queries and golden questions with. None for a kind that embeds nothing."""
        return None


RETRIEVERS: KindFamily[RetrieverKind, Retriever] = KindFamily(
    RetrieverKind, RETRIEVER_KINDS_GROUP, Retriever, lacks="identifier or retrieve()"
)
