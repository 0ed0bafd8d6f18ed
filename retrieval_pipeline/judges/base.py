"""What the judge kinds share: the context that names `judges.NAME` in every refusal, the parameters every
kind takes (`relevant_from`), and the one way a kind is built from its configuration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import Field, ValidationError

from retrieval_pipeline.core.base.errors import InvalidInputError, validation_problem
from retrieval_pipeline.core.retrieval.judges import DEFAULT_RELEVANT_FROM, GRADES
from retrieval_pipeline.core.retrieval.retriever import RetrieverParams
from retrieval_pipeline.retrievers.base.kind_context import KindContext

Params = TypeVar("Params", bound=RetrieverParams)


@dataclass(frozen=True)
class JudgeContext(KindContext):
    """A KindContext whose refusals name `judges.NAME`, so the retrievers' helpers (headers, secrets,
    scorers) refuse a judge's parameter under the judge's own key."""

    @property
    def key(self) -> str:
        return f"judges.{self.identifier}"

    def invalid(self, message: str, field: str | None = None) -> InvalidInputError:
        return InvalidInputError(message, source=self.build.source, key=self.key, field=self.within + field if field else None)

    def parse(self, params_class: type[Params], params: Mapping[str, Any]) -> Params:
        try:
            return params_class.model_validate(dict(params))
        except ValidationError as error:
            location, message = validation_problem(error, params_class, noun="key")
            raise self.invalid(message, ".".join(location) or None) from None


class JudgeParams(RetrieverParams):
    """Every kind's parameters: unknown keys refused, and the grade from which an answer is yes."""

    relevant_from: int = Field(DEFAULT_RELEVANT_FROM, ge=GRADES.start, le=GRADES.stop - 1)
