"""The values of UI metadata that are more than a Python value: a table, Markdown, a link, a JSON document;
and `plotted`, the float the UI plots."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    """As Dagster names a column's type: `string`, `int`, `float`, `bool`."""
    description: str | None = None


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]
    rows: tuple[Mapping[str, Any], ...]
    """Each row a cell per column name: a text, a number, a flag or None."""


@dataclass(frozen=True)
class Markdown:
    text: str


@dataclass(frozen=True)
class Link:
    """A URI with a scheme (`s3://...`) is a URL; anything else a local path."""

    uri: str

    @property
    def is_url(self) -> bool:
        return "://" in self.uri


@dataclass(frozen=True)
class Json:
    """A list or dict shown as a JSON document."""

    value: Any


def table(columns: Iterable[Column], rows: Iterable[Mapping[str, Any]]) -> Table:
    return Table(tuple(columns), tuple(rows))


def plotted(value: float | None, digits: int | None = None) -> float | None:
    """A float the UI plots, to the digits it reads with; a Python float even for a whole number (a
    configured `threshold: 1`), so the UI does not type it as an int. None, shown as null, where there is none."""
    if value is None:
        return None
    return float(value if digits is None else round(value, digits))
