"""The values of UI metadata that are more than a Python value: a table, Markdown, a link, a JSON document,
each typed as its `MetadataValue` by `typed`; and `plotted`, the float the UI plots.

`typed` is where every asset's and check's metadata passes on its way to the instance, so every text in
it is scrubbed of known secrets there (`core.secrets`), whichever builder quoted one: a configured url
with a key in its query, an error echoed by a service."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

from dagster import MetadataValue, TableColumn, TableRecord, TableSchema

from retrieval_pipeline.core.base.secrets import scrub


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


def typed(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A table, Markdown, a link or a JSON document as its `MetadataValue`; a text, count, flag, id list or
    float as the Python value it is, which Dagster types itself; every text with known secrets masked."""
    return {key: _typed(_scrubbed(value)) for key, value in metadata.items()}


def _scrubbed(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        return {_scrubbed(key): _scrubbed(item) for key, item in value.items()}
    if type(value) in (list, tuple):
        return type(value)(_scrubbed(item) for item in value)
    if is_dataclass(value) and not isinstance(value, type):
        return replace(value, **{field.name: _scrubbed(getattr(value, field.name)) for field in fields(value)})
    return value


def _typed(value: Any) -> Any:
    if isinstance(value, Table):
        schema = TableSchema(columns=[TableColumn(c.name, c.type, description=c.description) for c in value.columns])
        return MetadataValue.table(records=[TableRecord(row) for row in value.rows], schema=schema)
    if isinstance(value, Markdown):
        return MetadataValue.md(value.text)
    if isinstance(value, Link):
        return MetadataValue.url(value.uri) if value.is_url else MetadataValue.path(value.uri)
    if isinstance(value, Json):
        return MetadataValue.json(value.value)
    return value
