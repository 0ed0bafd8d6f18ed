"""Errors a user can act on: each names the source (file or configuration), the key and the field."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

QUOTE_LIMIT = 200  # characters of an offending value an error quotes: enough to recognise it, never 50 MB
NAME_LIMIT = 300  # a key or field path: names are short, but may embed a quoted value (`question '<id>'`)
MESSAGE_LIMIT = 1000  # a whole message, the last guard for values quoted without `quoted`


def clip(text: str, limit: int = QUOTE_LIMIT) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def quoted(value: object) -> str:
    """`repr` of a user's value for an error message, clipped to QUOTE_LIMIT characters."""
    return clip(repr(value))


def one_line(text: str) -> str:
    """Errors are printed as one line: parsers' multi-line explanations are joined."""
    return " ".join(text.split())


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """'; did you mean 'x'?' for the closest known name, else the known names, else nothing."""
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]!r}?"
    return f"; known: {', '.join(known)}" if known else ""


class RetrievalEvalError(Exception):
    """Base of every error the tool reports as one readable message instead of a traceback."""


class InvalidInputError(RetrievalEvalError, ValueError):
    """A set file, configuration or parameter that cannot be used; nothing is stored because of it.

    Always one line: `problem` (the message without the source, key and field) has its whitespace
    joined and is clipped, so no parser's multi-line text or pasted 50 MB value reaches the terminal.
    """

    def __init__(self, message: str, *, source: str | None = None, key: str | None = None, field: str | None = None):
        self.source = source
        self.key = key and clip(key, NAME_LIMIT)
        self.field = field and clip(field, NAME_LIMIT)
        parts = [p for p in (source, self.key, self.field and f"field '{self.field}'") if p]
        self.problem = message = clip(one_line(message), MESSAGE_LIMIT)
        super().__init__(f"{': '.join(parts)}: {message}" if parts else message)


class UnknownIdentifierError(RetrievalEvalError, KeyError):
    """A set, retriever or kind that is not registered; the message lists the known ones."""

    def __init__(self, what: str, identifier: str, known: Iterable[str], note: str | None = None):
        self.what = what
        self.identifier = identifier
        self.known = sorted(known)
        listing = ", ".join(self.known) if self.known else "none"
        close = difflib.get_close_matches(identifier, self.known, n=1, cutoff=0.6)
        guess = f" (did you mean {close[0]!r}?)" if close else ""
        super().__init__(f"unknown {what} {quoted(identifier)}{guess}; available: {listing}" + (f" ({note})" if note else ""))

    def __str__(self) -> str:
        return self.args[0]


class DuplicateIdentifierError(RetrievalEvalError, ValueError):
    """Two sources claim one identifier: failing fast beats silently shadowing one of them."""

    def __init__(self, what: str, identifier: str, first_source: str, second_source: str):
        super().__init__(f"duplicate {what} {quoted(identifier)}: given by {first_source} and by {second_source}")


class NotAcceptableError(RetrievalEvalError):
    """A stored run that cannot become a baseline (an incomplete run); nothing is recorded."""


class StoreError(RetrievalEvalError):
    """The result store cannot be reached or holds something unreadable."""


class ServiceFailedError(RetrievalEvalError):
    """A service a retriever needs failed while the retriever was built (an embeddings endpoint encoding
    the corpus), after the retries that could mend it: no question can be asked, so nothing is stored.
    Not a bug: the service, its credentials or its answers are what to fix."""


def validation_problem(error, model: type | None = None, noun: str = "field") -> tuple[list[str], str]:
    """The first problem of a pydantic ValidationError as (field path, plain sentence).

    An unknown key is reported before anything else, with the closest known key of `model` at that
    level: `questoins` explains the missing `questions`, so naming only the missing one misleads. Where
    a value may take several shapes (a union), pydantic reports every shape's complaint, dozens for a
    nested filter; only those of the shape the value came closest to are considered (see
    `_closest_alternatives`). The type and model names pydantic inserts into the path for a union are
    dropped: users wrote keys, not types. The offending value is quoted clipped, never whole.
    """
    problems = _closest_alternatives(error.errors())
    first = next((problem for problem in problems if problem["type"] == "extra_forbidden"), problems[0])
    path, parents = _user_path(first["loc"], model)
    location = [str(part) for part in path]
    kind = first["type"]
    if kind == "missing":
        message = "is required"
    elif kind == "extra_forbidden":
        known = _known_keys(parents) if model is not None else _missing_beside(problems, first)
        message = f"is not a known {noun}{did_you_mean(location[-1], known)}"
    elif kind == "too_short" and first.get("ctx", {}).get("actual_length") == 0:
        message = "must not be empty"
    elif kind == "enum":
        message = f"{quoted(first['input'])} is not one of {first.get('ctx', {}).get('expected', 'the allowed values')}"
    else:
        message = first["msg"].removeprefix("Value error, ")
    return location, message


def _closest_alternatives(problems: list[dict], depth: int = 0) -> list[dict]:
    """`problems` less those of every union alternative but the one the value came closest to: the one
    whose complaints reach the most keys deep (it matched the most of the value), then the one with the
    fewest complaints. A filter with one misspelt key is then one complaint about that key, not 44
    about every kind of condition it is not."""
    branches: dict[object, list[dict]] = {}
    for problem in problems:
        if len(problem["loc"]) > depth:
            branches.setdefault(problem["loc"][depth], []).append(problem)
    alternatives = [part for part in branches if _is_alternative(part)]
    if len(alternatives) > 1:
        closest = max(alternatives, key=lambda part: (max(map(_keys_deep, branches[part])), -len(branches[part])))
        branches = {part: group for part, group in branches.items() if part == closest or part not in alternatives}
    kept = {id(problem) for group in branches.values() for problem in _closest_alternatives(group, depth + 1)}
    return [problem for problem in problems if id(problem) in kept or len(problem["loc"]) <= depth]


def _keys_deep(problem: dict) -> int:
    return sum(not _is_alternative(part) for part in problem["loc"])


def _is_alternative(part: object) -> bool:
    """A union member's tag in an error's path: a type (`str`, `list[...]`) or a model's name."""
    return _is_union_member(part) or (isinstance(part, str) and part[:1].isupper() and part.isidentifier())


def _user_path(loc: tuple, model: type | None) -> tuple[list, list]:
    """The keys of `loc` a user wrote, and the types that may hold the last of them (empty without `model`).
    A field that happens to be named like a type (`date`) is a key the user wrote."""
    kinds, parents, path = [model] if model is not None else [], [], []
    for part in loc:
        named = [kind for kind in kinds if _is_model(kind) and kind.__name__ == part]
        if named:
            kinds = named
        elif not _is_union_member(part) or any(_is_model(kind) and part in kind.model_fields for kind in kinds):
            path.append(part)
            parents, kinds = kinds, [inner for kind in kinds for inner in _step(kind, part)]
    return path, parents


def _missing_beside(problems: list[dict], extra: dict) -> list[str]:
    parent = extra["loc"][:-1]
    return [str(p["loc"][-1]) for p in problems if p["type"] == "missing" and p["loc"][:-1] == parent]


def _known_keys(kinds: list) -> list[str]:
    return sorted({name for kind in kinds if _is_model(kind) for name in kind.model_fields})


def _step(kind: Any, part: object) -> list:
    if _is_model(kind):
        field = kind.model_fields.get(part) if isinstance(part, str) else None
        return _alternatives(field.annotation) if field else []
    origin, arguments = get_origin(kind), get_args(kind)
    if origin in (list, tuple, set, frozenset) and arguments:
        return _alternatives(arguments[0])
    if origin is dict and len(arguments) == 2:
        return _alternatives(arguments[1])
    return []


def _alternatives(annotation: Any) -> list:
    """The types a value of `annotation` may be: Annotated unwrapped, unions split."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _alternatives(get_args(annotation)[0])
    if origin in (Union, UnionType):
        return [inner for member in get_args(annotation) for inner in _alternatives(member)]
    return [annotation]


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and hasattr(kind, "model_fields")


_TYPE_NAMES = {"str", "int", "float", "bool", "list", "dict", "none", "datetime", "date"}
_UNION_TAGS = {"set-file", "beir-folder"}  # the tags of config.SetSource


def _is_union_member(part: object) -> bool:
    return isinstance(part, str) and ("[" in part or part in _TYPE_NAMES or part in _UNION_TAGS)
