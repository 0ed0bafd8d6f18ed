"""Retrievers built over other retrievers of the same configuration (fusion, rerank): the names checked
and the members built through the configuration, with a cycle refused instead of recursing."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from retrieval_pipeline.core.base.errors import InvalidInputError, UnknownIdentifierError
from retrieval_pipeline.core.retrieval.retriever import BuildContext, Retriever


class _Building(threading.local):
    """Retrievers over others being built on this thread, as (configuration, identifier): a member that
    leads back to one of them is a cycle, which would otherwise recurse until the interpreter gives up."""

    def __init__(self) -> None:
        self.stack: list[tuple[str, str]] = []


_building = _Building()


def check_known(names: Sequence[str], context: BuildContext, invalid: Callable[[str], InvalidInputError]) -> None:
    """Builds nothing: a name the configuration does not hold is refused, listing the ones it does."""
    known = context.known_retrievers
    unknown = [name for name in names if known is not None and name not in known]
    if unknown:
        raise invalid(str(UnknownIdentifierError("retriever", unknown[0], known)))


def build_members(
    kind: str, identifier: str, names: Sequence[str], context: BuildContext, invalid: Callable[[str], InvalidInputError]
) -> list[Retriever]:
    if context.build_retriever is None:
        raise invalid(f"{kind} needs a configuration that can build the retrievers it names")
    stack = _building.stack
    if (context.source, identifier) in stack:
        path = [name for source, name in stack if source == context.source]
        cycle = " -> ".join([*path[path.index(identifier) :], identifier])
        raise invalid(f"{kind} includes itself: {cycle}")
    stack.append((context.source, identifier))
    try:
        return [context.build_retriever(name) for name in names]
    except UnknownIdentifierError as error:
        raise invalid(str(error)) from None
    finally:
        stack.pop()
