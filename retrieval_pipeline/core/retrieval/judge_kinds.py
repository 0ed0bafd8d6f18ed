"""Judge kinds come from the entry-point group `retrieval_pipeline.judges`, loaded only when asked for, so a
team's judge plugs in as a retriever kind does."""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import EntryPoint
from typing import Any

from retrieval_pipeline.core.base import secrets
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.registry import Registry, entry_point_registry, installed_entry_points, loaded_kind
from retrieval_pipeline.core.retrieval.judges import JUDGE_KINDS_GROUP, Judge
from retrieval_pipeline.core.retrieval.retriever import BuildContext


def judge_kinds() -> Registry[EntryPoint]:
    """Kind name to entry point; two distributions claiming one kind fail fast, naming both."""
    return entry_point_registry("judge kind", installed_entry_points(JUDGE_KINDS_GROUP))


def build_judge(name: str, kind: str, params: Mapping[str, Any], context: BuildContext) -> Judge:
    """Secrets are remembered before the kind reads them, so even its own errors are scrubbed."""
    kind_class = _kind_class(name, kind, context)
    secrets.remember_configured(params)
    judge = kind_class.from_config(name, params, context)
    if not isinstance(judge, Judge):
        raise InvalidInputError(
            f"kind '{kind}' built {type(judge).__name__}, which lacks name, fingerprint, concurrency, fail_fast_after or judge()",
            source=context.source,
            key=f"judges.{name}",
        )
    return judge


def _kind_class(name: str, kind: str, context: BuildContext) -> Any:
    return loaded_kind(judge_kinds(), kind, context.source, f"judges.{name}")
