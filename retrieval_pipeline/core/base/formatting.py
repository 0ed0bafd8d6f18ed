"""How rates, deltas, p-values and latencies read as text, the same in the terminal, the Dagster UI, the
reports and the verdict sentences: one formatter per kind of figure, so no two outputs round or sign the
same number differently."""

from __future__ import annotations

from collections.abc import Sequence


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """`1 query`, `5 queries`: a count with its noun in the right number (plural: the singular plus `s`)."""
    return f"{count} {singular if count == 1 else plural or singular + 's'}"


def percent(rate: float) -> str:
    return f"{rate * 100:.1f}%"


def percent_or_blank(rate: float | None) -> str:
    """A table cell for a rate some rows lack (a cut-off only some runs have): blank, not a dash."""
    return "" if rate is None else percent(rate)


def rate_with_counts(hits: int, total: int, rate: float) -> str:
    return f"{percent(rate)} ({hits}/{total})"


def interval_text(bounds: tuple[float, float]) -> str:
    low, high = bounds
    return f"95% CI {low * 100:.1f}–{high * 100:.1f}%"


def signed(value: float) -> str:
    """One decimal with a sign, never "-0.0"."""
    return f"{round(value, 1) + 0.0:+.1f}"


def points(fraction: float) -> str:
    """A drop or a tolerance in percentage points, unsigned: "5.0 pp"."""
    return f"{fraction * 100:.1f} pp"


def signed_pp(delta: float | None) -> str:
    return "—" if delta is None else f"{signed(delta * 100)} pp"


def tenths(value: float) -> str:
    return f"{value:.1f}"


def milliseconds(value: float) -> str:
    return f"{tenths(value)} ms"


def signed_milliseconds(delta: float | None) -> str:
    return "—" if delta is None else f"{signed(delta)} ms"


def as_written(value: float) -> str:
    """A level or a tolerance as a person writes it: 0.05, 0.1, 0.02."""
    return f"{value:g}"


def p_value(value: float) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def p_phrase(value: float) -> str:
    """A p-value in a sentence: "p = 0.250", "p < 0.001"."""
    return "p < 0.001" if value < 0.001 else f"p = {value:.3f}"


def shortened(text: str, width: int) -> str:
    """At most `width` characters, the cut marked, so a long id cannot widen a table past the page."""
    return text if len(text) <= width else text[: width - 1] + "…"


def id_list(ids: Sequence[str], limit: int = 3, width: int | None = None) -> str:
    """The first `limit` ids (each cut to `width`), then how many more: a long list cannot widen a table."""
    if not ids:
        return "—"
    shown = ", ".join(ids[:limit] if width is None else [shortened(i, width) for i in ids[:limit]])
    return shown if len(ids) <= limit else f"{shown} +{len(ids) - limit}"
