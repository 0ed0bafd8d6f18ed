"""Charts as small PNGs for the Dagster UI (markdown metadata) and the HTML report: the leaderboard's here
(and a set of conversations' rates by turn depth), with the figure, colours and run labels every chart
shares (history_chart.py, coverage_chart.py).

PNG rather than SVG: the Dagster UI's markdown sanitiser drops inline `<svg>` but lets `data:` image
sources through, and a PNG of this size stays small whatever the number of runs. matplotlib is
imported when a chart is drawn, never at import time, and only through its object API on the Agg canvas:
no pyplot global state, so charts drawn by concurrent Dagster steps cannot mix.
"""

from __future__ import annotations

import base64
import io
from collections import Counter
from datetime import datetime

from retrieval_pipeline.core.golden.conversations import DEPTHS
from retrieval_pipeline.core.scoring.measures import HIT_RATE, TESTED, Figure
from retrieval_pipeline.core.services.evaluation.leaderboard import Leaderboard
from retrieval_pipeline.core.services.evaluation.leaderboard_turns import turn_entries

WIDTH_INCHES, DPI = 8.0, 90
MAX_DATE_LABELS = 10
FIRST, DEEPEST = TESTED[0].short, TESTED[-1].short
COLOURS = {FIRST: "#1f77b4", DEEPEST: "#ff7f0e"}
"""The tested rates' lines (top-1, top-3), drawn over every other charted figure's."""
OTHER_COLOURS = ("#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f")
REGRESSED, INCOMPLETE = "#d62728", "#7f7f7f"


def leaderboard_chart_png(board: Leaderboard) -> bytes:
    """Latest complete rates of every retriever, one panel per set, top-1 and top-3 bars side by side."""
    return png_bytes(leaderboard_chart(board))


def leaderboard_chart(board: Leaderboard):
    """The matplotlib figure of `leaderboard_chart_png`, for a test to measure where its texts fall."""
    sets = board.set_identifiers
    rows = max((len(board.for_set(s)) for s in sets), default=1)
    panels = max(len(sets), 1)
    height = 1.0 + 0.45 * rows * len(sets)
    # Margins from the longest retriever name, measured once: a constrained layout measured every text
    # of both panels twice and was most of this chart's cost.
    names = [entry.retriever_identifier for s in sets for entry in board.for_set(s)]
    left = (_text_width_inches(max(names, key=len, default=""), 8) + 0.2) / WIDTH_INCHES
    axes_height = (height - 0.35 - 0.5 - 0.55 * (panels - 1)) / panels
    figure, _ = new_figure(
        height,
        panels=panels,
        margins={
            "left": min(left, 0.5),
            "right": 0.89,
            "top": 1 - 0.35 / height,
            "bottom": 0.5 / height,
            "hspace": 0.55 / axes_height,
        },
    )
    for axes, set_identifier in zip(figure.axes, sets):
        entries = list(reversed(board.for_set(set_identifier)))
        for offset, bar in ((0.2, Figure(HIT_RATE, 1)), (-0.2, Figure(HIT_RATE, 3))):
            metric = bar.short
            rates = [100 * e.summary.figures[bar.key] for e in entries]
            errors = _error_bars(entries, bar, rates)
            axes.barh(
                [i + offset for i in range(len(entries))],
                rates,
                height=0.38,
                color=COLOURS[metric],
                label=metric,
                xerr=errors,
                capsize=3,
                error_kw={"elinewidth": 1, "ecolor": "#333333"},
            )
            # Each value right of its whisker's end (or of the bar), so the text never sits on the whisker.
            ends = [rate + (errors[1][i] if errors else 0.0) for i, rate in enumerate(rates)]
            for i, (rate, end) in enumerate(zip(rates, ends)):
                axes.annotate(
                    f"{rate:.1f}%", (end, i + offset), xytext=(4, 0), textcoords="offset points", fontsize=7, va="center"
                )
        axes.set_yticks(range(len(entries)), [e.retriever_identifier for e in entries], fontsize=8)
        axes.set_xlim(0, 115)  # room right of a 100% whisker for its value
        axes.set_title(f"{set_identifier}, {board.ranking}", fontsize=9, loc="left")
        axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    figure.axes[-1].set_xlabel("hit rate (%)", fontsize=8)
    return figure


def turn_depth_chart_png(board: Leaderboard, set_identifier: str) -> bytes | None:
    """A set's rates by turn depth, None for a set whose runs recorded no turns (nothing to draw)."""
    return png_bytes(turn_depth_chart(board, set_identifier)) if turn_entries(board.summaries(set_identifier)) else None


def turn_depth_chart(board: Leaderboard, set_identifier: str):
    """One colour per retriever, top-3 solid and top-1 dashed across depths 1 to 4+: lines, not bars, since
    what a person looks for is the slope, how much later turns lose. A depth a run had no turn at is a gap."""
    entries = turn_entries(board.summaries(set_identifier))
    palette = (COLOURS[FIRST], COLOURS[DEEPEST], *OTHER_COLOURS)
    longest = max((entry.retriever_identifier for entry in entries), key=len, default="")
    right = 1 - (_text_width_inches(longest, 7) + 0.6) / WIDTH_INCHES
    figure, axes = new_figure(3.2, margins={"left": 0.08, "right": max(right, 0.55), "top": 0.9, "bottom": 0.15})
    for index, entry in enumerate(entries):
        colour = palette[index % len(palette)]
        for tested, style in ((TESTED[-1], "-"), (TESTED[0], "--")):
            rates = [_depth_rate(entry.turns.by_depth.get(depth), tested.k) for depth in DEPTHS]
            label = entry.retriever_identifier if style == "-" else "_" + entry.retriever_identifier
            axes.plot(range(len(DEPTHS)), rates, style, color=colour, marker="o", markersize=3, linewidth=1.5, label=label)
    axes.set_xticks(range(len(DEPTHS)), DEPTHS, fontsize=8)
    axes.set_ylim(0, 105)
    axes.set_xlabel("turn depth", fontsize=8)
    axes.set_ylabel("hit rate (%)", fontsize=8)
    axes.tick_params(axis="y", labelsize=8)
    axes.set_title(f"{set_identifier}: {DEEPEST} (solid) and {FIRST} (dashed) by turn depth", fontsize=9, loc="left")
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return figure


def _depth_rate(rates, k: int) -> float:
    return float("nan") if rates is None else 100 * rates.hit_rate(k)


def run_labels(times: list[datetime]) -> list[str]:
    """A tick label per run, "MM-DD HH:MM" on two lines; runs that share a minute show their seconds, and
    runs that share a second are numbered, so no two runs ever read alike."""
    minutes = Counter(f"{t:%m-%d %H:%M}" for t in times)
    labels = [f"{t:%m-%d\n%H:%M:%S}" if minutes[f"{t:%m-%d %H:%M}"] > 1 else f"{t:%m-%d\n%H:%M}" for t in times]
    repeated, seen = Counter(labels), Counter()
    numbered = []
    for label in labels:
        seen[label] += 1
        numbered.append(f"{label} #{seen[label]}" if repeated[label] > 1 else label)
    return numbered


def _error_bars(entries, bar: Figure, rates: list[float]):
    """Distances from each bar to its interval's ends (none where an entry has no interval)."""
    bounds = [entry.summary.intervals.get(bar.key) for entry in entries]
    if all(bound is None for bound in bounds):
        return None
    return [
        [0.0 if b is None else max(rate - 100 * b[0], 0.0) for rate, b in zip(rates, bounds)],
        [0.0 if b is None else max(100 * b[1] - rate, 0.0) for rate, b in zip(rates, bounds)],
    ]


def image_data_uri(image: bytes, media_type: str = "image/png") -> str:
    """The picture itself as an image source, so nothing is fetched to show it."""
    return f"data:{media_type};base64,{base64.b64encode(image).decode('ascii')}"


def markdown_image(image: bytes, alt: str, media_type: str = "image/png") -> str:
    """`media_type`: `image/svg+xml` for an SVG (`history_svg.py`)."""
    return f"![{alt}]({image_data_uri(image, media_type)})"


def new_figure(height: float, margins: dict[str, float], panels: int = 1, heights: tuple[float, ...] | None = None):
    """Laid out by the chart's own margins: matplotlib's constrained layout measured every text twice.
    Panels share their x axis (`heights`: their relative heights)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(WIDTH_INCHES, height), dpi=DPI)
    figure.subplots_adjust(**margins)
    FigureCanvasAgg(figure)
    if panels == 1:
        return figure, figure.subplots(1, 1, squeeze=False)[0][0]
    return figure, figure.subplots(panels, 1, sharex=True, gridspec_kw={"height_ratios": heights})


def _text_width_inches(text: str, fontsize: float) -> float:
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    width, _, _ = RendererAgg(1, 1, DPI).get_text_width_height_descent(text, FontProperties(size=fontsize), ismath=False)
    return width / DPI


def png_bytes(figure) -> bytes:
    """The fastest zlib level: a chart is drawn for every evaluation and a tenth of its cost was deflating
    it harder, for a file only some 15% smaller."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None}, pil_kwargs={"compress_level": 1})
    return buffer.getvalue()
