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


def _lines(text: str) -> list[str]:
    return [ANSI.sub("", line).rstrip() for line in text.splitlines()]


def _below(lines: list[str], title: str) -> int:
    """The index of the line right under `title`, which a table narrower than its title wraps."""
    for start in range(len(lines)):
        joined, end = lines[start].strip(), start + 1
        while title.startswith(joined) and joined != title and end < len(lines):
            joined, end = f"{joined} {lines[end].strip()}", end + 1
        if joined == title:
            return end
    raise AssertionError(f"no table titled {title!r}")


def _fragments(line: str) -> tuple[str, ...]:
    parts = re.split("[│┃]", line)
    return tuple(part.strip() for part in (parts[1:-1] if line.startswith(("│", "┃")) else parts))


def _table(lines: list[str], title: str) -> tuple[list[str], list[str], int]:
    """The header lines, the body lines and the index of the first line after the table (boxed or not)."""
    header, body, index = [], [], _below(lines, title)
    while index < len(lines) and not lines[index].startswith("└"):
        line = lines[index]
        if "╇" in line:
            header, body = body, header  # what came before the rule was the header
        elif "┃" in line or "│" in line:
            body.append(line)
        elif body or header:
            break
        index += 1
    return header, body, index + (index < len(lines) and lines[index].startswith("└"))


def printed_table(text: str, title: str) -> PrintedTable:
    """The table printed right under the line(s) `title`."""
    header, body, _ = _table(_lines(text), title)
    columns = zip(*(_fragments(line) for line in header))
    headers = tuple(" ".join(fragment for fragment in column if fragment) for column in columns)
    return PrintedTable(headers, tuple(_fragments(line) for line in body))


def left_out(text: str, title: str) -> list[str]:
    """The columns the sentence under the table says were left out to fit the terminal (none: [])."""
    lines = _lines(text)
    _, _, end = _table(lines, title)
    sentence = ""
    for line in lines[end : end + 3]:  # a narrow console wraps it
        sentence = f"{sentence} {line.strip()}".strip()
        found = re.fullmatch(r"Left out to fit \d+ columns: (.*) \(a wider terminal shows them\)\.", sentence)
        if found:
            return found.group(1).split(", ")
    return []


def percent(rate: float) -> str:
    return f"{rate * 100:.1f}%"


def figure_in(run: dict, name: str) -> str:
    """A run's figure (a `run --json` or `compare --json` run) named as a column heads it (`top-5`,
    `MRR@10`, `judged@10`), written as its measure reads: a rate in percent, a score with three decimals."""
    name = name.lower()
    if name.startswith("top-"):
        return percent(run["hit_rates"][name.removeprefix("top-")]["hit_rate"])
    value = run["metrics"][name]
    return percent(value) if name.startswith("judged") else f"{value:.3f}"


def change_text(measure: str, delta: float) -> str:
    """A change as a column shows it: points for a hit rate (`top1`), three signed decimals for a score."""
    return f"{round(delta * 100, 1) + 0.0:+.1f} pp" if measure.startswith("top") else f"{round(delta, 3) + 0.0:+.3f}"


def p_text(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def assert_whole(text: str, title: str, expected: dict[str, str | None], always: tuple[str, ...]) -> None:
    """Each figure column of the table shown reads exactly the JSON's figures (None: a column not read,
    not a figure or a timing); a column not shown is named as left out; the `always` ones are shown."""
    table = printed_table(text, title)
    shown = [header for header in expected if header in table.headers]
    checked = [header for header in shown if expected[header] is not None]
    assert {header: table.column(header) for header in checked} == {header: expected[header] for header in checked}
    assert sorted(shown + left_out(text, title)) == sorted(expected)
    assert set(always) <= set(shown)
