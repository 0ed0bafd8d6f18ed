"""The named retrievers of a configuration (`retrievers:`): each built once per configuration, and asked
about through its kind (its corpus, the retrievers it repeats, its question encoder, whether its
parameters hold) without building it or its index. The project facade, `ProjectConfig`, holds one and
answers through it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from retrieval_pipeline.core.base.errors import UnknownIdentifierError
from retrieval_pipeline.core.retrieval.retriever import BuildContext, Retriever
from retrieval_pipeline.core.services.config_file import RetrieverSpec

Progress = Callable[[str], None]


class ConfiguredRetrievers:
    """`context(progress)` is the build context every kind is given; `unknown_note` ends the message
    naming a retriever that is not configured (on the embedded demo: that no configuration was named)."""

    def __init__(
        self,
        specs: Mapping[str, RetrieverSpec],
        context: Callable[[Progress | None], BuildContext],
        unknown_note: str | None,
    ):
        self._specs = specs
        self._context = context
        self._unknown_note = unknown_note
        self._built: dict[str, Retriever] = {}
        self._corpora: dict[str, frozenset[str] | None] = {}

    def built(self, identifier: str, progress: Progress | None = None) -> Retriever:
        """Built once per configuration; a kind such as fusion may ask for other named retrievers. A long
        build (encoding a corpus) tells `progress` how it goes."""
        if identifier not in self._built:
            from retrieval_pipeline.core.retrieval.retriever_kinds import build_retriever

            if identifier not in self._specs:
                raise UnknownIdentifierError("retriever", identifier, self._specs, self._unknown_note)
            spec = self._specs[identifier]
            self._built[identifier] = build_retriever(identifier, spec.kind, spec.params, self._context(progress))
        return self._built[identifier]

    def check(self, identifier: str) -> None:
        """One retriever's kind and parameters, refused as building it would refuse them, with no index
        built: `list` reports each one's problem apart."""
        from retrieval_pipeline.core.retrieval.retriever_kinds import check_retriever

        self._asked(check_retriever, identifier)

    def corpus(self, identifier: str) -> frozenset[str] | None:
        """The documents retriever `identifier` can return, when its kind knows them (see retriever_kinds).
        Read once per configuration, like the retrievers: every set's label check asks for every corpus."""
        if identifier not in self._corpora:
            from retrieval_pipeline.core.retrieval.retriever_kinds import retriever_corpus

            self._corpora[identifier] = self._asked(retriever_corpus, identifier)
        return self._corpora[identifier]

    def echoes(self, identifier: str) -> tuple[str, ...]:
        """The retrievers whose rankings retriever `identifier` repeats (a fusion's members), read without
        building anything (see retriever_kinds)."""
        from retrieval_pipeline.core.retrieval.retriever_kinds import retriever_echoes

        return self._asked(retriever_echoes, identifier)

    def corpus_texts(self, identifier: str, wanted: Collection[str]) -> Mapping[str, tuple[str, str]] | None:
        """(title, text) of the wanted documents when retriever `identifier`'s kind knows its corpus."""
        from retrieval_pipeline.core.retrieval.retriever_kinds import retriever_corpus_texts

        return self._asked(retriever_corpus_texts, identifier, wanted)

    def question_encoder(self, identifier: str) -> Callable[[Sequence[str]], Any] | None:
        """How retriever `identifier` embeds a question (None: its kind embeds nothing), built without its index."""
        from retrieval_pipeline.core.retrieval.retriever_kinds import retriever_question_encoder

        return self._asked(retriever_question_encoder, identifier)

    def embeds_questions(self, identifier: str) -> bool:
        """Whether retriever `identifier`'s kind offers a question encoder, asked without loading a model."""
        from retrieval_pipeline.core.retrieval.retriever_kinds import embeds_questions

        return embeds_questions(self._specs[identifier].kind)

    def _asked(self, ask: Callable, identifier: str, *wanted: Any):
        """`ask` of the kind-level functions of retriever_kinds, given the retriever's spec and a build context."""
        spec = self._specs[identifier]
        return ask(identifier, spec.kind, spec.params, self._context(None), *wanted)
