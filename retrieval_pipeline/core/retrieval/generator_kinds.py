"""Question-generator kinds come from the entry-point group `retrieval_pipeline.generators`, loaded only
when asked for, so a team's generator plugs in as a judge or a retriever kind does."""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import EntryPoint
from typing import Any

from retrieval_pipeline.core.base import secrets
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.registry import Registry, entry_point_registry, installed_entry_points, loaded_kind
from retrieval_pipeline.core.retrieval.generators import FORMS, GENERATOR_KINDS_GROUP, Generator, GeneratorKind
from retrieval_pipeline.core.retrieval.judge_kinds import FromConfig, protocol_kind
from retrieval_pipeline.core.retrieval.retriever import BuildContext


def generator_kinds() -> Registry[EntryPoint]:
    """Kind name to entry point; two distributions claiming one kind fail fast, naming both."""
    return entry_point_registry("generator kind", installed_entry_points(GENERATOR_KINDS_GROUP))


def build_generator(name: str, kind: str, params: Mapping[str, Any], context: BuildContext) -> Generator:
    """Secrets are remembered before the kind reads them, so even its own errors are scrubbed; a built
    object that does not keep the contract is refused here, not on its first request."""
    key = f"generators.{name}"
    kind_class = as_generator_kind(loaded_kind(generator_kinds(), kind, context.source, key))
    secrets.remember_configured(params)
    generator = kind_class.parse(name, params, context).build()
    if not isinstance(generator, Generator):
        raise InvalidInputError(
            f"kind '{kind}' built {type(generator).__name__}, which lacks name, fingerprint, concurrency, fail_fast_after, "
            "forms or generate()",
            source=context.source,
            key=key,
        )
    if not generator.forms or not set(generator.forms) <= set(FORMS):
        raise InvalidInputError(
            f"kind '{kind}' says it writes forms {list(generator.forms)!r}; a generator writes one or both of {', '.join(FORMS)}",
            source=context.source,
            key=key,
        )
    return generator


def as_generator_kind(loaded: Any) -> type[GeneratorKind]:
    """A `GeneratorKind` as it is; any other class as a `ProtocolGeneratorKind` of it."""
    if isinstance(loaded, type) and issubclass(loaded, GeneratorKind):
        return loaded
    return protocol_kind(ProtocolGeneratorKind, loaded)


class ProtocolGeneratorKind(FromConfig, GeneratorKind[Any]):
    """A generator kind of the first protocol (`FromConfig`)."""
