"""The named retrievers of a configuration (`retrievers:`): each parsed once into its kind, which callers
ask what they need without building anything (its corpus, the retrievers it repeats, its question
encoder), and built once. The project facade, `ProjectConfig`, holds one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from retrieval_pipeline.core.base.errors import InvalidInputError, UnknownIdentifierError, quoted
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.core.retrieval.retriever import BuildContext, Retriever
from retrieval_pipeline.core.retrieval.retriever_kinds import RETRIEVERS, RetrieverKind
from retrieval_pipeline.core.services.configuration.schema import RetrieverSpec

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
        self._kinds: dict[str, RetrieverKind] = {}
        self._built: dict[str, Retriever] = {}

    def kind(self, identifier: str) -> RetrieverKind:
        """Retriever `identifier`'s kind with its parameters checked, refused as building it would refuse
        them, with nothing built: parsed once per configuration (every set's label check asks every corpus)."""
        if identifier not in self._kinds:
            spec = self._spec(identifier)
            self._kinds[identifier] = RETRIEVERS.parsed(identifier, spec.kind, spec.params, self._context(None))
        return self._kinds[identifier]

    def kind_class(self, identifier: str) -> type[RetrieverKind]:
        """The class of retriever `identifier`'s kind, its parameters unread: what the kind says of itself
        (`embeds_questions`) without loading a model. A kind not installed, or no kind, answers as
        `RetrieverKind` itself, which offers nothing (parsing the entry says what is wrong)."""
        try:
            return RETRIEVERS.kind_class(identifier, self._spec(identifier).kind, self._context(None))
        except (UnknownIdentifierError, InvalidInputError):
            return RetrieverKind

    def built(self, identifier: str, progress: Progress | None = None) -> Retriever:
        """Built once per configuration; a kind such as fusion may ask for other named retrievers. A long
        build (encoding a corpus) tells `progress` how it goes. A run is stored under the identifier its
        retriever reports, and run keys, partitions and baselines under the configured name, so one that
        reports another name is refused here, before any question is asked."""
        if identifier not in self._built:
            kind = self.kind(identifier).reporting(progress)
            built = RETRIEVERS.built(self._specs[identifier].kind, kind)
            if built.identifier != identifier:
                raise KindContext.of(kind).invalid(
                    f"kind '{self._specs[identifier].kind}' built a retriever that reports the identifier "
                    f"{quoted(built.identifier)}, not {quoted(identifier)}: its runs would be stored under another name"
                )
            self._built[identifier] = built
        return self._built[identifier]

    def _spec(self, identifier: str) -> RetrieverSpec:
        if identifier not in self._specs:
            raise UnknownIdentifierError("retriever", identifier, self._specs, self._unknown_note)
        return self._specs[identifier]
