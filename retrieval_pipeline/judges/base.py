"""What the built-in judge and generator kinds share: the parameters every judge kind takes
(`relevant_from`), and the context through which the retrievers' helpers (headers, imported functions,
scorers) refuse a parameter under the entry's own key, `judges.NAME` or `generators.NAME`."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.judges import DEFAULT_RELEVANT_FROM, GRADES
from retrieval_pipeline.core.retrieval.kinds import Kind
from retrieval_pipeline.core.retrieval.retriever import RetrieverParams
from retrieval_pipeline.retrievers.base.kind_context import KindContext


@dataclass(frozen=True)
class EntryContext(KindContext):
    """A KindContext whose refusals name `section.NAME` rather than `retrievers.NAME`."""

    section: str = "judges"

    @property
    def key(self) -> str:
        return f"{self.section}.{self.identifier}"

    def invalid(self, message: str, field: str | None = None) -> InvalidInputError:
        return InvalidInputError(message, source=self.build.source, key=self.key, field=self.within + field if field else None)


def helpers_context(kind: Kind) -> EntryContext:
    """What a kind hands the retrievers' helpers, so their refusals name its section, entry and field."""
    return EntryContext(kind.name, kind.context, section=kind.section)


class JudgeParams(RetrieverParams):
    """Every judge kind's parameters: unknown keys refused, and the grade from which an answer is yes."""

    relevant_from: int = Field(DEFAULT_RELEVANT_FROM, ge=GRADES.start, le=GRADES.stop - 1)
