"""What a configured kind is: one entry of `retrievers:`, `judges:` or `generators:`, its parameters
checked once, then asked everything the project wants to know about it through methods with defaults.

A kind is one class, a subclass of its family's base (`RetrieverKind`, `JudgeKind`, `GeneratorKind`)
registered under the family's entry-point group. It names its parameters' model (`Params`, a
`KindParams`), writes `build`, and overrides only the questions it can answer (a retriever kind: its
corpus, the retrievers it repeats, its question encoder). Parsing is the check: what `parse` accepts,
`build` builds. Every family is built the same way, by its `KindFamily`, and every refusal of an entry
is made by its `KindContext`, so each names the configuration, `section.NAME` and the field alike.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, ClassVar, Generic, Self, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from retrieval_pipeline.core.base import secrets
from retrieval_pipeline.core.base.errors import InvalidInputError, ServiceFailedError, validation_problem
from retrieval_pipeline.core.base.registry import Registry, entry_point_registry, installed_entry_points, loaded_kind
from retrieval_pipeline.core.retrieval.retriever import BuildContext, RetrieverFault

ParamsT = TypeVar("ParamsT", bound=BaseModel)
BuiltT = TypeVar("BuiltT")
KindT = TypeVar("KindT", bound="Kind")
DOTTED_PATTERN = r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$"
"""`package.module:function`, the way a configuration names code of the user's own (an encoder, a judge)."""


class KindParams(BaseModel):
    """Base of every kind's parameters: unknown keys are refused, so a typo never passes silently."""

    model_config = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True)
class KindContext:
    """The build context bound to the entry at hand, handed to a kind's helpers (the encoder's, the
    members', the headers') so none needs the entry threaded through. `within` is the key the parameters
    at hand sit under (`query_encoder.` on the http kind), so a refusal of a nested setting names its
    whole path."""

    identifier: str
    build: BuildContext
    section: str
    within: str = ""

    @classmethod
    def of(cls, kind: Kind) -> KindContext:
        return cls(kind.name, kind.context, kind.section)

    @property
    def key(self) -> str:
        return f"{self.section}.{self.identifier}"

    def under(self, prefix: str) -> KindContext:
        return replace(self, within=self.within + prefix)

    def invalid(self, message: str, field: str | None = None) -> InvalidInputError:
        """The one refusal of an entry: the configuration, `section.NAME` and the field."""
        return InvalidInputError(message, source=self.build.source, key=self.key, field=self.within + field if field else None)

    def resolve(self, path: str | Path) -> Path:
        return self.build.resolve(path)


def imported_callable(dotted: str, kind: KindContext, field: str) -> Callable[..., Any]:
    """The function a `DOTTED_PATTERN` parameter names, imported when the configuration is checked, so a wrong
    name is refused before any run: not installed, not there, or failing on import are all "cannot use"."""
    module_name, _, attributes = dotted.partition(":")
    try:
        found: Any = importlib.import_module(module_name)
        for attribute in attributes.split("."):
            found = getattr(found, attribute)
    except Exception as error:  # noqa: BLE001
        raise kind.invalid(f"cannot import {dotted}: {type(error).__name__}: {error}", field) from None
    if not callable(found):
        raise kind.invalid(f"{dotted} is not callable", field)
    return found


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
            raise KindContext(name, context, cls.section).invalid(message, ".".join(location) or None) from None

    def invalid(self, message: str, field: str | None = None) -> InvalidInputError:
        return KindContext.of(self).invalid(message, field)

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


@dataclass(frozen=True)
class KindFamily(Generic[KindT, BuiltT]):
    """Retrievers, judges or generators: the kinds' base class (which names the section), the entry-point
    group they are registered under, and the contract what they build keeps (`contract`, a runtime-checkable
    protocol, whose members `lacks` names). `refused` says what else is wrong with a built object, if
    anything (a generator's forms), so nothing that breaks the contract reaches its first use."""

    base: type[KindT]
    group: str
    contract: type
    lacks: str
    refused: Callable[[Any], str | None] | None = None

    @property
    def section(self) -> str:
        return self.base.section

    def kinds(self) -> Registry[EntryPoint]:
        """Kind name to entry point; two distributions claiming one kind fail fast, naming both."""
        return entry_point_registry(f"{self.section.removesuffix('s')} kind", installed_entry_points(self.group))

    def kind_class(self, name: str, kind: str, context: BuildContext) -> type[KindT]:
        """The class registered as `kind`; an unknown kind, or a class that is no `base`, is the
        configuration's error at `section.NAME`."""
        at = KindContext(name, context, self.section)
        loaded = loaded_kind(self.kinds(), kind, context.source, at.key)
        if not (isinstance(loaded, type) and issubclass(loaded, self.base)):
            shown = f"{getattr(loaded, '__module__', '?')}.{getattr(loaded, '__qualname__', type(loaded).__name__)}"
            raise at.invalid(f"kind '{kind}' is {shown}, which is not a {self.base.__name__}", "kind")
        return loaded

    def parsed(self, name: str, kind: str, params: Mapping[str, Any], context: BuildContext) -> KindT:
        """Entry `name` of kind `kind`, its parameters checked as building it would check them. Every
        `{env: VARIABLE}` among them is remembered as a secret first, so even the kind's own errors are scrubbed."""
        found = self.kind_class(name, kind, context)
        secrets.remember_configured(params)
        return found.parse(name, params, context)

    def built(self, kind: str, parsed: KindT) -> BuiltT:
        """What the checked entry builds. A service failing meanwhile (a `RetrieverFault`: an embeddings
        endpoint encoding the corpus) is the service's failure, named with the entry, not a bug of the tool."""
        try:
            built = parsed.build()
        except RetrieverFault as fault:
            noun = self.section.removesuffix("s")
            raise ServiceFailedError(f"{noun} {parsed.name} could not be built: {secrets.scrub(str(fault))}") from None
        if not isinstance(built, self.contract):
            problem: str | None = f"built {type(built).__name__}, which lacks {self.lacks}"
        else:
            problem = self.refused(built) if self.refused else None
        if problem:
            raise KindContext.of(parsed).invalid(f"kind '{kind}' {problem}")
        return built

    def build(self, name: str, kind: str, params: Mapping[str, Any], context: BuildContext) -> BuiltT:
        return self.built(kind, self.parsed(name, kind, params, context))
