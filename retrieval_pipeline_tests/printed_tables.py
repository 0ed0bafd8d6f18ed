"""A rich table read back from what the terminal shows, however a narrow terminal folded it: each column's
header and, per column, its cells' text in order. A cell wrapped between words reads back joined by a
space, so `33.3% (80/240)` over two lines reads `33.3% (80/240)`; a cut cell (`33.…`) reads as it shows."""

from __future__ import annotations

import re
from dataclasses import dataclass

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass(frozen=True)
class PrintedTable:
    headers: tuple[str, ...]
    lines: tuple[tuple[str, ...], ...]
    """Each body line split into its columns' fragments."""

    def column(self, header: str) -> str:
        """Every cell of the column, top to bottom, as one text (fragments joined by a space)."""
        index = self.headers.index(header)
        return " ".join(line[index] for line in self.lines if line[index])

    def rows(self) -> list[dict[str, str]]:
        """Each body line by header: for a table whose every row takes one line."""
        return [dict(zip(self.headers, line)) for line in self.lines]


def printed_table(text: str, title: str) -> PrintedTable:
    """The table printed right under the line `title`."""
    lines = [ANSI.sub("", line).rstrip() for line in text.splitlines()]
    start = next(index for index, line in enumerate(lines) if line.strip() == title)
    header, body, part = [], [], None
    for line in lines[start + 1 :]:
        if line.startswith("┏"):
            part = header
        elif line.startswith("┡"):
            part = body
        elif line.startswith("└"):
            break
        elif part is not None:
            part.append(tuple(fragment.strip() for fragment in re.split("[│┃]", line)[1:-1]))
    headers = tuple(" ".join(fragment for fragment in column if fragment) for column in zip(*header))
    return PrintedTable(headers, tuple(body))


def left_out(text: str, title: str) -> list[str]:
    """The columns the line under the table says were left out to fit the terminal (none: [])."""
    lines = [ANSI.sub("", line) for line in text.splitlines()]
    start = next(index for index, line in enumerate(lines) if line.strip() == title)
    end = next(index for index in range(start + 1, len(lines)) if lines[index].startswith("└"))
    found = re.match(
        r"Left out to fit \d+ columns: (.*) \(a wider terminal shows them\)\.", lines[end + 1] if end + 1 < len(lines) else ""
    )
    return found.group(1).split(", ") if found else []
