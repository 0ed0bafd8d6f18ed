"""Every text file users hand us (sets, configurations, corpora, BEIR and TREC imports) is read here.

One reader, so every format treats bytes the same way: UTF-8 with or without a byte-order mark (editors
on Windows add one), optionally gzip-compressed, and a file that is not UTF-8 is refused naming the byte
offset of the first bad byte, which a user can jump to with any hex viewer. YAML and JSON syntax errors
become `FILE:LINE:COLUMN: problem`, the form editors and terminals turn into links.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from retrieval_pipeline.core.base.errors import InvalidInputError, one_line

BOM = b"\xef\xbb\xbf"
JSON_ERRORS = (ValueError, RecursionError)
"""What `json.loads` raises on text it cannot read: JSONDecodeError (a ValueError) for bad syntax, a plain
ValueError for a number of more digits than Python converts, RecursionError for arrays or objects nested
thousands deep. Input a user hands us is caught with all three: each is that input's fault, never a bug."""
_DAMAGED = (EOFError, zlib.error, gzip.BadGzipFile)
"""What reading a gzip file raises when its data is damaged or cut short."""


def read_text(path: str | Path, what: str = "file") -> str:
    """The whole file as text; `what` ("set file", "configuration") names it in the error."""
    path = Path(path)
    with _opened(path, what) as handle:
        try:
            data = handle.read()
        except (OSError, *_DAMAGED) as error:
            raise _unreadable(path, what, error) from None
    start = len(BOM) if data.startswith(BOM) else 0
    try:
        return data[start:].decode("utf-8")
    except UnicodeDecodeError:
        raise utf8_problem(data, str(path)) from None


def text_lines(path: str | Path, what: str = "file") -> Iterator[tuple[int, str]]:
    """(line number, line) one at a time, so a corpus of gigabytes never sits in memory whole. A file that
    cannot be read on (a gzip damaged or cut short in the middle) is refused naming the last line read."""
    path = Path(path)
    with _opened(path, what) as handle:
        offset = number = 0
        try:
            for number, raw in enumerate(handle, start=1):
                start = len(BOM) if number == 1 and raw.startswith(BOM) else 0
                try:
                    line = raw[start:].decode("utf-8")
                except UnicodeDecodeError as error:
                    raise not_utf8(path, offset + start + error.start, number) from None
                offset += len(raw)
                yield number, line
        except (OSError, *_DAMAGED) as error:
            raise _unreadable(path, what, error, number) from None


def not_utf8(path: str | Path, offset: int, line: int, key: str | None = None) -> InvalidInputError:
    message = f"not UTF-8 text: invalid byte at offset {offset} (line {line}); save the file as UTF-8"
    return InvalidInputError(message, source=str(path), key=key)


def utf8_problem(data: bytes, source: str, key: str | None = None) -> InvalidInputError | None:
    """The error naming the first byte of `data` (a whole file) that is not UTF-8, or None if there is none."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return not_utf8(source, error.start, data.count(b"\n", 0, error.start) + 1, key)
    return None


def parse_yaml(text: str, source: str) -> Any:
    """PyYAML's safe loader, in C (libyaml) when PyYAML has it: the same documents, parsed several
    times faster (a nightly reads sets once per run). libyaml words its errors differently, so a
    document it refuses is parsed again in Python for the message."""
    import yaml

    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        pass
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "syntax error"
        context = f" ({error.context})" if error.context and error.problem else ""
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise InvalidInputError(one_line(f"invalid YAML: {problem}{context}"), source=where) from None
    except yaml.YAMLError as error:
        raise InvalidInputError(one_line(f"invalid YAML: {error}"), source=source) from None


def parse_json(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidInputError(f"invalid JSON: {error.msg}", source=f"{source}:{error.lineno}:{error.colno}") from None
    except JSON_ERRORS as error:  # numbers too long to convert, nesting too deep
        raise InvalidInputError(f"invalid JSON: {json_problem(error)}", source=source) from None


def json_problem(error: Exception) -> str:
    """One of JSON_ERRORS in a few words: what is wrong with the text, not Python's advice to a programmer."""
    if isinstance(error, json.JSONDecodeError):
        return error.msg
    if isinstance(error, RecursionError):
        return "nested too deeply (arrays or objects thousands deep)"
    if "digits" in str(error):
        return "a number with more digits than can be read"
    return one_line(str(error))


def _opened(path: Path, what: str) -> IO[bytes]:
    try:
        return gzip.open(path, "rb") if path.name.endswith(".gz") else path.open("rb")
    except OSError as error:
        raise _unreadable(path, what, error) from None


def _unreadable(path: Path, what: str, error: Exception, line: int = 0) -> InvalidInputError:
    """`line`: the last line read whole, named when the file could not be read on from there."""
    reason = getattr(error, "strerror", None) or one_line(str(error)) or type(error).__name__
    damaged = "the file is damaged or cut short: " if isinstance(error, _DAMAGED) else ""
    where = f" after line {line}" if line else ""
    return InvalidInputError(f"cannot read the {what}{where} ({damaged}{reason})", source=str(path))
