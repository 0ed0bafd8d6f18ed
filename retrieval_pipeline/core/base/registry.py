"""A plain mapping that refuses a second claim on an identifier and lists the known ones on a miss;
and the entry points plugins register, which fill such mappings."""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar

from retrieval_pipeline.core.base.errors import DuplicateIdentifierError, UnknownIdentifierError

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
    """Read once per group and import path: scanning every installed distribution is costly, and
    was paid at every build of a retriever and every read of the configured sets (each Dagster run);
    a changed `sys.path` (a plugin installed into a new folder) is scanned afresh."""
    return _entry_points_on(group, tuple(sys.path))


@functools.lru_cache(maxsize=8)
def _entry_points_on(group: str, import_path: tuple[str, ...]) -> tuple[EntryPoint, ...]:
    return tuple(entry_points(group=group))
