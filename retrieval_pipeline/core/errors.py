"""Errors a user can act on: each names the source (file or configuration), the key and the field."""

from __future__ import annotations

from collections.abc import Iterable


class RetrievalEvalError(Exception):
    """Base of every error the tool reports as one readable message instead of a traceback."""


class InvalidInputError(RetrievalEvalError, ValueError):
    """A set file, configuration or parameter that cannot be used; nothing is stored because of it."""

    def __init__(self, message: str, *, source: str | None = None, key: str | None = None, field: str | None = None):
        self.source = source
        self.key = key
        self.field = field
        parts = [p for p in (source, key and f"{key}", field and f"field '{field}'") if p]
        super().__init__(f"{': '.join(parts)}: {message}" if parts else message)


class UnknownIdentifierError(RetrievalEvalError, KeyError):
    """A set, retriever or kind that is not registered; the message lists the known ones."""

    def __init__(self, what: str, identifier: str, known: Iterable[str]):
        self.what = what
        self.identifier = identifier
        self.known = sorted(known)
        listing = ", ".join(self.known) if self.known else "none"
        super().__init__(f"unknown {what} '{identifier}'; available: {listing}")

    def __str__(self) -> str:
        return self.args[0]


class DuplicateIdentifierError(RetrievalEvalError, ValueError):
    """Two sources claim one identifier: failing fast beats silently shadowing one of them."""

    def __init__(self, what: str, identifier: str, first_source: str, second_source: str):
        super().__init__(f"duplicate {what} '{identifier}': given by {first_source} and by {second_source}")


class NotAcceptableError(RetrievalEvalError):
    """A stored run that cannot become a baseline (an incomplete run); nothing is recorded."""


class StoreError(RetrievalEvalError):
    """The result store cannot be reached or holds something unreadable."""


def validation_problem(error) -> tuple[list[str], str]:
    """The first problem of a pydantic ValidationError as (field path, plain sentence).

    The type names pydantic inserts into the path for a union of plain types (`str`, `list[str]`) are
    dropped: users wrote keys, not types.
    """
    first = error.errors()[0]
    location = [str(part) for part in first["loc"] if not _is_union_member(part)]
    kind = first["type"]
    if kind == "missing":
        message = "is required"
    elif kind == "extra_forbidden":
        message = "is not a known field"
    elif kind == "enum":
        message = f"{first['input']!r} is not one of {first.get('ctx', {}).get('expected', 'the allowed values')}"
    else:
        message = first["msg"].removeprefix("Value error, ")
    return location, message


_TYPE_NAMES = {"str", "int", "float", "bool", "list", "dict", "none"}
_UNION_TAGS = {"set-file", "beir-folder"}  # the tags of config.SetSource


def _is_union_member(part: object) -> bool:
    return isinstance(part, str) and ("[" in part or part in _TYPE_NAMES or part in _UNION_TAGS)
