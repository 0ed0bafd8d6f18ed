"""What a configured kind is: one entry of `retrievers:`, `judges:` or `generators:`, its parameters
checked once, then asked everything the project wants to know about it through methods with defaults.

A kind is a subclass registered under its entry-point group. It names its parameters' model (`Params`),
writes `build`, and overrides only the questions it can answer (a retriever kind: its corpus, the
retrievers it repeats, its question encoder). Parsing is the check: what `parse` accepts, `build` builds.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, ClassVar, Generic, Self, TypeVar

from pydantic import BaseModel, ValidationError

from retrieval_pipeline.core.base.errors import InvalidInputError, validation_problem
from retrieval_pipeline.core.retrieval.retriever import BuildContext

ParamsT = TypeVar("ParamsT", bound=BaseModel)
BuiltT = TypeVar("BuiltT")
KindT = TypeVar("KindT", bound="Kind")


class Kind(Generic[ParamsT, BuiltT]):
    """`section` is the configuration's section the kind is named in, so every refusal names
    `section.NAME` and the field."""

    Params: ClassVar[type[BaseModel]]
    section: ClassVar[str]

    def __init__(self, name: str, params: ParamsT, context: BuildContext):
        self.name = name
        self.params = params
        self.context = context

    @classmethod
    def parse(cls: type[KindT], name: str, raw: Mapping[str, Any], context: BuildContext) -> KindT:
        """The parameters checked as `build` will use them, with nothing built or opened; a kind with
        checks across its parameters (files present, a known model) adds them in `checked`."""
        kind = cls(name, cls.validated(name, raw, context), context)
        kind.checked()
        return kind

    @classmethod
    def validated(cls, name: str, raw: Mapping[str, Any], context: BuildContext) -> ParamsT:
        """Each parameter's own check and nothing across them: for a question that must be answered even
        when the entry would be refused (Dagster's partitions, read whatever a model file's state)."""
        try:
            return cls.Params.model_validate(dict(raw))
        except ValidationError as error:
            location, message = validation_problem(error, cls.Params, noun="key")
            raise cls.refusal(name, context, message, ".".join(location) or None) from None

    @classmethod
    def refusal(cls, name: str, context: BuildContext, message: str, field: str | None = None) -> InvalidInputError:
        return InvalidInputError(message, source=context.source, key=f"{cls.section}.{name}", field=field)

    def invalid(self, message: str, field: str | None = None) -> InvalidInputError:
        """A refusal of one of this entry's parameters, naming the configuration, `section.NAME` and the field."""
        return self.refusal(self.name, self.context, message, field)

    def reporting(self, progress: Callable[[str], None] | None) -> Self:
        """The same checked entry, its build telling `progress` how it goes (encoding a corpus): an entry is
        parsed once per configuration, and each build may report to another place."""
        if progress is None:
            return self
        reported = copy.copy(self)
        reported.context = replace(self.context, progress=progress)
        return reported

    def checked(self) -> None:
        """Checks beyond each parameter's own (a corpus file present, two settings that exclude each other)."""

    def build(self) -> BuiltT:
        raise NotImplementedError(f"{type(self).__name__} does not say how it is built")

    def describe(self) -> Mapping[str, str | int | float | bool]:
        """What `list` and the run's metadata say about the entry beyond its kind; nothing by default."""
        return {}
