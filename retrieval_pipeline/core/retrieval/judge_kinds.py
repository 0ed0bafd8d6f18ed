"""Judge kinds come from the entry-point group `retrieval_pipeline.judges`, loaded only when asked for, so a
team's judge plugs in as a retriever kind does."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib.metadata import EntryPoint
from typing import Any, ClassVar

from retrieval_pipeline.core.base import secrets
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.registry import Registry, entry_point_registry, installed_entry_points, loaded_kind
from retrieval_pipeline.core.retrieval.judges import JUDGE_KINDS_GROUP, Judge, JudgeKind
from retrieval_pipeline.core.retrieval.kinds import KindT
from retrieval_pipeline.core.retrieval.retriever import BuildContext


def judge_kinds() -> Registry[EntryPoint]:
    """Kind name to entry point; two distributions claiming one kind fail fast, naming both."""
    return entry_point_registry("judge kind", installed_entry_points(JUDGE_KINDS_GROUP))


def build_judge(name: str, kind: str, params: Mapping[str, Any], context: BuildContext) -> Judge:
    """Secrets are remembered before the kind reads them, so even its own errors are scrubbed."""
    kind_class = as_judge_kind(loaded_kind(judge_kinds(), kind, context.source, f"judges.{name}"))
    secrets.remember_configured(params)
    judge = kind_class.parse(name, params, context).build()
    if not isinstance(judge, Judge):
        raise InvalidInputError(
            f"kind '{kind}' built {type(judge).__name__}, which lacks name, fingerprint, concurrency, fail_fast_after or judge()",
            source=context.source,
            key=f"judges.{name}",
        )
    return judge


def as_judge_kind(loaded: Any) -> type[JudgeKind]:
    """A `JudgeKind` as it is; any other class as a `ProtocolJudgeKind` of it (one class per plugin class)."""
    if isinstance(loaded, type) and issubclass(loaded, JudgeKind):
        return loaded
    return protocol_kind(ProtocolJudgeKind, loaded)


class FromConfig:
    """A kind written to the first documented protocol, `plugin`: a class whose
    `from_config(name, params, context)` checks its parameters and builds at once. Its parameters are the
    configured mapping, passed as written. Shared by judge and generator kinds."""

    plugin: ClassVar[Any]
    name: str
    params: Any
    context: BuildContext

    @classmethod
    def parse(cls, name: str, raw: Mapping[str, Any], context: BuildContext) -> Any:
        return cls(name, raw, context)  # type: ignore[call-arg]

    def build(self) -> Any:
        return self.plugin.from_config(self.name, self.params, self.context)


class ProtocolJudgeKind(FromConfig, JudgeKind[Any]):
    """A judge kind of the first protocol."""


@cache
def protocol_kind(base: type[KindT], plugin: Any) -> type[KindT]:
    return type(
        f"{base.__name__}[{getattr(plugin, '__name__', type(plugin).__name__)}]", (base,), {"plugin": staticmethod(plugin)}
    )
