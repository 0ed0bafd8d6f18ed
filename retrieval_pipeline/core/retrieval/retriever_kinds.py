"""Retriever kinds come from the entry-point group third parties use too, loaded only when asked for."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from importlib.metadata import EntryPoint
from typing import Any

from retrieval_pipeline.core.base import secrets
from retrieval_pipeline.core.base.errors import InvalidInputError, ServiceFailedError, UnknownIdentifierError
from retrieval_pipeline.core.base.registry import Registry, entry_point_registry, installed_entry_points, loaded_kind
from retrieval_pipeline.core.retrieval.retriever import RETRIEVER_KINDS_GROUP, BuildContext, Retriever, RetrieverFault


def retriever_kinds() -> Registry[EntryPoint]:
    """Kind name to entry point; two distributions claiming one kind fail fast, naming both."""
    return entry_point_registry("retriever kind", installed_entry_points(RETRIEVER_KINDS_GROUP))


def build_retriever(identifier: str, kind: str, params: Mapping[str, Any], context: BuildContext) -> Retriever:
    """A service failing while the kind builds (a `RetrieverFault`: an embeddings endpoint encoding the
    corpus) is the service's failure, named with the retriever, not a bug of the tool."""
    kind_class = _kind_class(identifier, kind, context)
    secrets.remember_configured(params)  # before the kind reads them, so even its own errors are scrubbed
    try:
        retriever = kind_class.from_config(identifier, params, context)
    except RetrieverFault as fault:
        raise ServiceFailedError(f"retriever {identifier} could not be built: {secrets.scrub(str(fault))}") from None
    if not isinstance(retriever, Retriever):
        raise InvalidInputError(
            f"kind '{kind}' built {type(retriever).__name__}, which lacks identifier or retrieve()",
            source=context.source,
            key=f"retrievers.{identifier}",
        )
    return retriever


def check_retriever(identifier: str, kind: str, params: Mapping[str, Any], context: BuildContext) -> None:
    """What `build_retriever` would refuse, short of building: the kind, and the kind's own `check_config`
    when it has one (a plugin kind without it is only looked up)."""
    check = getattr(_kind_class(identifier, kind, context), "check_config", None)
    if check is not None:
        check(identifier, params, context)


def retriever_corpus(identifier: str, kind: str, params: Mapping[str, Any], context: BuildContext) -> frozenset[str] | None:
    """The documents a configured retriever can return, from the kind's optional classmethod
    `corpus_document_ids(identifier, params, context)`, read without building anything (no index, no run
    file): None when the kind cannot know, so the label audit can tell a label naming no document from a
    label a retriever missed."""
    documents = getattr(_kind_class(identifier, kind, context), "corpus_document_ids", None)
    return None if documents is None else documents(identifier, params, context)


def retriever_corpus_texts(
    identifier: str, kind: str, params: Mapping[str, Any], context: BuildContext, wanted: Collection[str]
) -> Mapping[str, tuple[str, str]] | None:
    """(title, text) of the wanted documents, from the kind's optional classmethod
    `corpus_texts(identifier, params, context, wanted)`, read without building anything: None when the
    kind cannot know, so a judging file still lists the candidate by id."""
    texts = getattr(_kind_class(identifier, kind, context), "corpus_texts", None)
    return None if texts is None else texts(identifier, params, context, wanted)


def retriever_echoes(identifier: str, kind: str, params: Mapping[str, Any], context: BuildContext) -> tuple[str, ...]:
    """The retrievers of the configuration whose rankings this one repeats rather than judges anew, from
    the kind's optional classmethod `echoed_retrievers(identifier, params, context)` (a fusion: its
    members); none when the kind has no such method. The label audit does not count their agreement as
    two opinions."""
    echoes = getattr(_kind_class(identifier, kind, context), "echoed_retrievers", None)
    return () if echoes is None else tuple(echoes(identifier, params, context))


def retriever_question_encoder(
    identifier: str, kind: str, params: Mapping[str, Any], context: BuildContext
) -> Callable[[Sequence[str]], Any] | None:
    """Texts to vectors as the retriever embeds its questions, from the kind's optional classmethod
    `question_encoder(identifier, params, context)`, with no index built: None for a kind that embeds
    nothing (lexical, http), so `coverage` can pick the first retriever that does."""
    encoder = getattr(_kind_class(identifier, kind, context), "question_encoder", None)
    return None if encoder is None else encoder(identifier, params, context)


def embeds_questions(kind: str) -> bool:
    """Whether `kind` (installed) offers `question_encoder`; an unknown kind offers nothing."""
    try:
        return hasattr(retriever_kinds()[kind].load(), "question_encoder")
    except UnknownIdentifierError:
        return False


def _kind_class(identifier: str, kind: str, context: BuildContext) -> Any:
    return loaded_kind(retriever_kinds(), kind, context.source, f"retrievers.{identifier}")
