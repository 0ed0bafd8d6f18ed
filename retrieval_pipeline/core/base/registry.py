"""A plain mapping that refuses a second claim on an identifier and lists the known ones on a miss;
and the entry points plugins register, which fill such mappings."""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

from retrieval_pipeline.core.base.errors import DuplicateIdentifierError, InvalidInputError, UnknownIdentifierError

T = TypeVar("T")


class Registry(Mapping[str, T], Generic[T]):
    """Identifier to entry, remembering where each entry came from so a clash can name both sources."""

    def __init__(self, what: str):
        self.what = what
        self._entries: dict[str, T] = {}
        self._sources: dict[str, str] = {}

    def add(self, identifier: str, entry: T, source: str) -> None:
        if identifier in self._entries:
            raise DuplicateIdentifierError(self.what, identifier, self._sources[identifier], source)
        self._entries[identifier] = entry
        self._sources[identifier] = source

    def source_of(self, identifier: str) -> str:
        return self._sources[self._known(identifier)]

    def _known(self, identifier: str) -> str:
        if identifier not in self._entries:
            raise UnknownIdentifierError(self.what, identifier, self._entries)
        return identifier

    def __getitem__(self, identifier: str) -> T:
        return self._entries[self._known(identifier)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def installed_entry_points(group: str) -> tuple[EntryPoint, ...]:
    """The group's installed entry points, read once per group and import path: scanning every installed
    distribution is costly, and every build of a retriever and every read of the configured sets asks for
    them. A changed `sys.path` (a plugin installed into a new folder) is scanned afresh."""
    return _entry_points_on(group, tuple(sys.path))


@functools.lru_cache(maxsize=8)
def _entry_points_on(group: str, import_path: tuple[str, ...]) -> tuple[EntryPoint, ...]:
    return tuple(entry_points(group=group))


@functools.lru_cache(maxsize=16)
def entry_point_registry(what: str, entry_points: tuple[EntryPoint, ...]) -> Registry[EntryPoint]:
    """Name to entry point, each named with its distribution, so two distributions claiming one name fail
    fast naming both. Built once per set of entry points: naming a distribution parses its metadata,
    which adds up over many distributions, and every build and check of a kind asks for the kinds."""
    kinds: Registry[EntryPoint] = Registry(what)
    for entry_point in entry_points:
        distribution = entry_point.dist.name if entry_point.dist else "an unknown distribution"
        kinds.add(entry_point.name, entry_point, f"{entry_point.value} (from {distribution})")
    return kinds


def loaded_kind(kinds: Registry[EntryPoint], kind: str, source: str, key: str) -> Any:
    """The class registered as `kind`; an unknown kind is the configuration's error at `key`, listing the known ones."""
    try:
        entry_point = kinds[kind]
    except UnknownIdentifierError as error:
        raise InvalidInputError(str(error), source=source, key=key, field="kind") from None
    return entry_point.load()
