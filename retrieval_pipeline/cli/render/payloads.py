"""How a `--json` document reaches stdout: one JSON object per command invocation. The documents themselves
are the views' `to_dict()` (core/services/views/), the same a library caller gets."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from itertools import islice
from typing import Any

import click

ROWS_PER_WRITE = 1000


def emit(document: dict[str, Any]) -> None:
    """Exactly one JSON object on stdout: indented for a person at a terminal, compact for a pipe,
    where Python's C encoder writes a large document many times faster.

    A value given as an iterator or as `QuestionRows` (per-question rows) is written to a pipe a thousand
    rows at a time, so a large run is never held whole as row objects and text; `QuestionRows` write
    their own JSON text, in about half the time the encoder takes over their dicts.
    """
    from retrieval_pipeline.core.services.views.question_rows import QuestionRows

    streamed = {key: value for key, value in document.items() if isinstance(value, Iterator | QuestionRows)}
    if sys.stdout.isatty():
        click.echo(_dumps({**document, **{key: list(rows) for key, rows in streamed.items()}}, indent=2))
        return
    markers = {key: f"\x00{uuid.uuid4().hex}" for key in streamed}
    rest = _dumps({**document, **markers})
    for key, rows in streamed.items():
        before, _, rest = rest.partition(_dumps(markers[key]))
        click.echo(before + "[", nl=False)
        texts, separator = rows.json_texts() if isinstance(rows, QuestionRows) else map(_dumps, rows), ""
        while chunk := list(islice(texts, ROWS_PER_WRITE)):
            click.echo(separator + ", ".join(chunk), nl=False)
            separator = ","
        click.echo("]", nl=False)
    click.echo(rest)


def _dumps(value: Any, indent: int | None = None) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)
