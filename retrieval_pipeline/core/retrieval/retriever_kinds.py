"""What a configured retriever's kind answers, and where kinds come from: the entry-point group third
parties use too, loaded only when asked for.

A `RetrieverKind` is one entry of `retrievers:` with its parameters checked once (`parse`): it builds the
retriever and answers, through methods with defaults, what the project asks without building anything
(the documents it can return, the retrievers it repeats, how it embeds a question). A kind written to the
first protocol (a class with `from_config` and optional classmethods) is read through `ProtocolKind`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from functools import cache, cached_property
from importlib.metadata import EntryPoint
from typing import Any, ClassVar

from retrieval_pipeline.core.base import secrets
from retrieval_pipeline.core.base.errors import InvalidInputError, ServiceFailedError
from retrieval_pipeline.core.base.registry import Registry, entry_point_registry, installed_entry_points, loaded_kind
from retrieval_pipeline.core.retrieval.kinds import Kind, ParamsT
from retrieval_pipeline.core.retrieval.retriever import RETRIEVER_KINDS_GROUP, BuildContext, Retriever, RetrieverFault

QuestionEncoder = Callable[[Sequence[str]], Any]


class RetrieverKind(Kind[ParamsT, Retriever]):
    """One entry of `retrievers:`, refusals naming `retrievers.NAME`; `build` makes the retriever (the
    `Retriever` protocol: `retrieve`, optionally `retrieve_batch`, `index_version`, `build_report`).

    The other questions are asked without building anything, and a kind overrides those it can answer.
    """

    section = "retrievers"
    embeds_questions: ClassVar[bool] = False
    """Whether `question_encoder` gives an encoder, asked of the class so no model is loaded to know it."""

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


def retriever_kinds() -> Registry[EntryPoint]:
    """Kind name to entry point; two distributions claiming one kind fail fast, naming both."""
    return entry_point_registry("retriever kind", installed_entry_points(RETRIEVER_KINDS_GROUP))


def kind_class(identifier: str, kind: str, context: BuildContext) -> type[RetrieverKind]:
    """The class registered as `kind`, a first-protocol class read through `ProtocolKind`; an unknown
    kind is the configuration's error at `retrievers.<identifier>`, listing the known ones."""
    return as_retriever_kind(loaded_kind(retriever_kinds(), kind, context.source, f"retrievers.{identifier}"))


def parsed_retriever(identifier: str, kind: str, params: Mapping[str, Any], context: BuildContext) -> RetrieverKind:
    """Retriever `identifier` of kind `kind`, its parameters checked as building it would check them. Every
    `{env: VARIABLE}` among them is remembered as a secret first, so even the kind's own errors are scrubbed."""
    found = kind_class(identifier, kind, context)
    secrets.remember_configured(params)
    return found.parse(identifier, params, context)


def built_retriever(kind: str, parsed: RetrieverKind) -> Retriever:
    """The retriever built. A service failing meanwhile (a `RetrieverFault`: an embeddings endpoint encoding
    the corpus) is the service's failure, named with the retriever, not a bug of the tool."""
    try:
        retriever = parsed.build()
    except RetrieverFault as fault:
        raise ServiceFailedError(f"retriever {parsed.name} could not be built: {secrets.scrub(str(fault))}") from None
    if not isinstance(retriever, Retriever):
        raise InvalidInputError(
            f"kind '{kind}' built {type(retriever).__name__}, which lacks identifier or retrieve()",
            source=parsed.context.source,
            key=f"retrievers.{parsed.name}",
        )
    return retriever


def as_retriever_kind(loaded: Any) -> type[RetrieverKind]:
    """A `RetrieverKind` as it is; any other class as a `ProtocolKind` of it (one class per plugin class)."""
    if isinstance(loaded, type) and issubclass(loaded, RetrieverKind):
        return loaded
    return _protocol_kind(loaded)


class ProtocolKind(RetrieverKind[Any]):
    """A kind written to the first documented protocol, `plugin`: a class with
    `from_config(identifier, params, context)` and, optionally, `check_config`, `corpus_document_ids`,
    `corpus_texts`, `echoed_retrievers` and `question_encoder`, each taking `(identifier, params, context)`.
    Its parameters are the configured mapping, checked by `check_config` when it has one. The one place a
    kind's abilities are found by their names."""

    plugin: ClassVar[Any]

    @classmethod
    def parse(cls, name: str, raw: Mapping[str, Any], context: BuildContext) -> ProtocolKind:
        check = getattr(cls.plugin, "check_config", None)
        if check is not None:
            check(name, raw, context)
        return cls(name, raw, context)

    def build(self) -> Retriever:
        return self.plugin.from_config(self.name, self.params, self.context)

    def corpus(self) -> frozenset[str] | None:
        return self._corpus

    @cached_property
    def _corpus(self) -> frozenset[str] | None:
        return self._asked("corpus_document_ids", None)

    def corpus_texts(self, wanted: Collection[str]) -> Mapping[str, tuple[str, str]] | None:
        return self._asked("corpus_texts", None, wanted)

    def echoed(self) -> tuple[str, ...]:
        return tuple(self._asked("echoed_retrievers", ()))

    def question_encoder(self) -> QuestionEncoder | None:
        return self._asked("question_encoder", None)

    def _asked(self, method: str, otherwise: Any, *wanted: Any) -> Any:
        found = getattr(self.plugin, method, None)
        return otherwise if found is None else found(self.name, self.params, self.context, *wanted)


@cache
def _protocol_kind(plugin: Any) -> type[ProtocolKind]:
    return type(
        f"ProtocolKind[{getattr(plugin, '__name__', type(plugin).__name__)}]",
        (ProtocolKind,),
        {"plugin": staticmethod(plugin), "embeds_questions": hasattr(plugin, "question_encoder")},
    )
