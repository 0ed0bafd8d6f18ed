"""Retrievers built over other retrievers of the same configuration (fusion, rerank): the names checked
and the members built through the configuration, with a cycle refused instead of recursing."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from retrieval_pipeline.core.base.errors import UnknownIdentifierError
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.core.retrieval.retriever import Retriever


class _Building(threading.local):
    """Retrievers over others being built on this thread, as (configuration, identifier): a member that
    leads back to one of them is a cycle, which would otherwise recurse until the interpreter gives up."""

    def __init__(self) -> None:
        self.stack: list[tuple[str, str]] = []


_building = _Building()


def check_known(names: Sequence[str], kind: KindContext, field: str) -> None:
    """Builds nothing: a name the configuration does not hold is refused, listing the ones it does."""
    known = kind.build.known_retrievers
    unknown = [name for name in names if known is not None and name not in known]
    if unknown:
        raise kind.invalid(str(UnknownIdentifierError("retriever", unknown[0], known)), field)


def build_members(kind_name: str, names: Sequence[str], kind: KindContext, field: str) -> list[Retriever]:
    """`names` built through the configuration; `field` is the parameter that names them."""
    context, identifier = kind.build, kind.identifier
    if context.build_retriever is None:
        raise kind.invalid(f"{kind_name} needs a configuration that can build the retrievers it names", field)
    stack = _building.stack
    if (context.source, identifier) in stack:
        path = [name for source, name in stack if source == context.source]
        cycle = " -> ".join([*path[path.index(identifier) :], identifier])
        raise kind.invalid(f"{kind_name} includes itself: {cycle}", field)
    stack.append((context.source, identifier))
    try:
        return [context.build_retriever(name) for name in names]
    except UnknownIdentifierError as error:
        raise kind.invalid(str(error), field) from None
    finally:
        stack.pop()
