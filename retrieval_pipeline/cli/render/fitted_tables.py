"""Tables that fit the terminal without cutting a figure.

Rich alone fits a wide table by shortening its columns evenly, so at 80 columns `33.3%` reads `33.…` and
`0.810` reads `0.8…`. Here identifiers fold, headers and figure cells wrap only between words (a figure
and its counts may take two lines, never lose a character), and where even that is too wide the
least needed columns are left out and named in a line under the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

Cell = str | Text

IDENTIFIER_WIDTH = 8
"""The narrowest an identifier column folds to (`bm25_tit` over `les`)."""
PADDING = 2
"""A space either side of every cell, rich's default."""


@dataclass(frozen=True)
class Column:
    header: str
    justify: str = "right"
    identifier: bool = False
    """Its cells fold anywhere, as an id may; any other cell, and every header, wraps only between words."""
    named: bool = False
    """Its header is an id (a retriever's column), which folds; its cells still wrap between words."""
    optional: int = 0
    """0: always shown. Otherwise left out when the table cannot fit, the highest first (of equals, the
    rightmost first)."""


def print_fitted(
    console: Console,
    title: str | None,
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    *,
    show_edge: bool = True,
) -> None:
    """The table at the console's width, then which columns were left out to fit it, if any."""
    shown, widths = _fit(columns, rows, console.width - (2 if show_edge else 0))
    table = Table(title=title, title_justify="left", show_edge=show_edge)
    for index, width in zip(shown, widths):
        column = columns[index]
        table.add_column(column.header, justify=column.justify, overflow="fold", min_width=width, max_width=width)
    for row in rows:
        table.add_row(*(row[index] for index in shown))
    console.print(table, crop=False)  # a table even its narrowest widths cannot fit runs long, never cut
    left_out = [column.header for index, column in enumerate(columns) if index not in shown]
    if left_out:
        console.print(
            f"Left out to fit {console.width} columns: {', '.join(left_out)} (a wider terminal shows them).", style="dim"
        )


def _fit(columns: Sequence[Column], rows: Sequence[Sequence[Cell]], width: int) -> tuple[list[int], list[int]]:
    """The columns shown and their content widths within `width` (the console's, less the table's edges).
    Should even the columns always shown not fit, they keep their narrowest widths and the lines run past
    the terminal's edge rather than cut a figure."""
    shown = list(range(len(columns)))
    while True:
        spans = [_span(columns[index], [row[index] for row in rows]) for index in shown]
        widths = _narrowed(spans, width - len(shown) * (PADDING + 1) + 1)
        optional = [index for index in shown if columns[index].optional]
        if widths is not None or not optional:
            return shown, widths or [narrowest for _, _, narrowest in spans]
        shown.remove(max(reversed(optional), key=lambda index: columns[index].optional))


def _span(column: Column, cells: Sequence[Cell]) -> tuple[int, int, int]:
    """(natural, one line per cell, narrowest) content widths: the widest cell or header; every cell on
    one line but the header wrapped between words; and every cell wrapped between words too."""
    header_words = max(map(cell_len, column.header.split()), default=1)
    if column.named:
        header_words = min(header_words, IDENTIFIER_WIDTH)
    plain = [cell.plain if isinstance(cell, Text) else cell for cell in cells]
    widest = max(map(cell_len, plain), default=1)
    natural = max(widest, cell_len(column.header))
    if column.identifier:
        narrowest = max(min(widest, IDENTIFIER_WIDTH), header_words)
        return natural, narrowest, narrowest
    words = max((cell_len(word) for text in plain for word in text.split()), default=1)
    return natural, max(widest, header_words), max(words, header_words)


def _narrowed(spans: Sequence[tuple[int, int, int]], room: int) -> list[int] | None:
    """Widths within `room`: first identifiers fold and headers wrap, then cells wrap, the columns with the
    most to give first (a rate with its counts before a p-value), of equals the rightmost; None if nothing fits."""
    widths = [natural for natural, _, _ in spans]
    for stage in (1, 2):
        for index in sorted(range(len(spans)), key=lambda index: (spans[index][stage] - widths[index], -index)):
            excess = sum(widths) - room
            if excess <= 0:
                return widths
            widths[index] -= min(excess, widths[index] - spans[index][stage])
    return widths if sum(widths) <= room else None
