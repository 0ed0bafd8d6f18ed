"""A pair's history chart as an SVG written directly: what every evaluation partition shows in the Dagster
UI's pop-up. The picture of `history_chart.py`'s top panel (top-1 and top-3 with their 95% intervals, the
baseline's rate and the lowest rate that passes, regressed and incomplete runs, set edits, the baseline
run) without matplotlib, whose PNG cost about 100 ms a partition, most of what our bookkeeping added to
Dagster's; this text takes about a millisecond. The UI's Markdown shows it as an image: its sanitiser lets
`data:` sources through, never inline `<svg>`."""

from __future__ import annotations

from html import escape

from retrieval_pipeline.core.services.evaluation.chart_data import HistoryChartData
from retrieval_pipeline.reports.charts import COLOURS, DEEPEST, DPI, FIRST, INCOMPLETE, MAX_DATE_LABELS, REGRESSED, run_labels

WIDTH, HEIGHT = 720, 324
LEFT, RIGHT, TOP, BOTTOM = 0.07 * WIDTH, 0.79 * WIDTH, 0.09 * HEIGHT, 0.83 * HEIGHT
PT = DPI / 72
"""Pixels per point: sizes, as `history_chart.py` gives them in points."""
GREY = "#555555"


def history_chart_svg(data: HistoryChartData) -> bytes:
    points, drawn = data.points, [metric for metric in (DEEPEST, FIRST) if metric in data.metrics]  # `metrics` reads every run
    span = max(len(points), 1)

    def x(index: float) -> float:
        return LEFT + (index + 0.5) / span * (RIGHT - LEFT)

    def y(rate: float) -> float:
        return BOTTOM - 100 * rate / 105 * (BOTTOM - TOP)

    shapes = [_frame(y)]
    for index, point in enumerate(points):
        if point.regressed:
            shapes.append(_line(x(index), TOP, x(index), BOTTOM, REGRESSED, 6 * PT, opacity=0.25))
        elif not point.complete:
            shapes.append(_line(x(index), TOP, x(index), BOTTOM, INCOMPLETE, 6 * PT, "2,3", 0.2))
    for index in data.set_edits:
        shapes.append(_line(x(index - 0.5), TOP, x(index - 0.5), BOTTOM, GREY, PT, "1,2"))
        shapes.append(_text(x(index - 0.5) + 3, BOTTOM - 3, "set edited", 7, fill=GREY))
    if data.baseline_index is not None:
        shapes.append(_line(x(data.baseline_index), TOP, x(data.baseline_index), BOTTOM, "black", PT, "5,3"))
        shapes.append(_text(x(data.baseline_index) + 3, TOP + 12, "baseline", 8))
    for metric in drawn:  # the first tested rate over the deepest, so equal rates still show both
        shapes += _metric(data, metric, x, y)
    for index, point in enumerate(points):
        for metric in drawn:
            rate = point.rate(metric)
            if rate is not None and point.regressed:
                shapes.append(_cross(x(index), y(rate)))
            elif rate is not None and not point.complete:
                shapes.append(_dot(x(index), y(rate), 3 * PT, "white", INCOMPLETE))
    every = -(-len(points) // MAX_DATE_LABELS)
    labels = run_labels([point.summary.run_at for point in points])
    shapes += [_tick_label(x(index), label) for index, label in enumerate(labels) if index % every == 0]
    key = data.key
    title = f"{key.set_identifier} × {key.retriever_identifier}: last {len(points)} runs, {data.labels}"
    shapes.append(_text((LEFT + RIGHT) / 2, TOP - 6, title, 10, anchor="middle"))
    shapes += _legend(data, drawn[::-1])
    head = f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}"'
    body = "".join(shapes)
    return f'{head} font-family="DejaVu Sans, Arial, sans-serif"><rect width="100%" height="100%" fill="white"/>{body}</svg>'.encode()


def _frame(y) -> str:
    """The axes, their grid every 20% and the y axis's label."""
    grid = "".join(
        _line(LEFT, y(level / 100), RIGHT, y(level / 100), "#b0b0b0", 0.8, opacity=0.3)
        + _text(LEFT - 4, y(level / 100) + 3, str(level), 8, anchor="end")
        for level in range(0, 101, 20)
    )
    axes = f'<rect x="{LEFT:.1f}" y="{TOP:.1f}" width="{RIGHT - LEFT:.1f}" height="{BOTTOM - TOP:.1f}" fill="none" stroke="black" stroke-width="0.8"/>'
    label = f'<text transform="translate(14 {(TOP + BOTTOM) / 2:.1f}) rotate(-90)" font-size="{8 * PT:.1f}" text-anchor="middle">hit rate (%)</text>'
    return grid + axes + label


def _metric(data: HistoryChartData, metric: str, x, y) -> list[str]:
    """The rate's complete runs with their 95% interval shaded, its baseline's rate dotted and the lowest
    that passes dashed: a point below the dashed line fails the check."""
    colour = COLOURS[metric]
    complete = [(index, point) for index, point in enumerate(data.points) if point.complete and point.rate(metric) is not None]
    shapes = []
    bounds = [(index, point.interval(metric)) for index, point in complete if point.interval(metric) is not None]
    if bounds:
        outline = [(x(i), y(b[1])) for i, b in bounds] + [(x(i), y(b[0])) for i, b in reversed(bounds)]
        shapes.append(f'<polygon points="{_points(outline)}" fill="{colour}" fill-opacity="0.12"/>')
    line = [(x(index), y(point.rate(metric))) for index, point in complete]
    shapes.append(f'<polyline points="{_points(line)}" fill="none" stroke="{colour}" stroke-width="{1.8 * PT:.2f}"/>')
    shapes += [_marker(metric, cx, cy) for cx, cy in line]
    tolerance, rate = data.tolerance(metric), data.baseline_rate(metric)
    if tolerance is not None and rate is not None:
        shapes.append(_line(LEFT, y(rate), RIGHT, y(rate), colour, PT, "1,2", 0.9))
        shapes.append(_line(LEFT, y(max(rate - tolerance, 0.0)), RIGHT, y(max(rate - tolerance, 0.0)), colour, 1.2 * PT, "5,3"))
    return shapes


def _legend(data: HistoryChartData, drawn: list[str]) -> list[str]:
    entries = [(_marker(metric, 0, 0, colour_line=True), metric) for metric in drawn]
    if data.baseline is not None and any(data.tolerance(metric) is not None for metric in COLOURS):
        rescored = " (rescored)" if data.rescored_baseline else ""
        entries.append((_line(-10, 0, 10, 0, GREY, PT, "1,2"), f"baseline rate{rescored}"))
        entries.append((_line(-10, 0, 10, 0, GREY, PT, "5,3"), "lowest passing rate"))
    if any(point.intervals for point in data.points):
        entries.append(
            (f'<rect x="-10" y="-4" width="20" height="8" fill="{COLOURS[FIRST]}" fill-opacity="0.12"/>', "95% interval")
        )
    if any(point.regressed for point in data.points):
        entries.append((_cross(0, 0), "regressed"))
    if any(not point.complete for point in data.points):
        entries.append((_dot(0, 0, 3 * PT, "white", INCOMPLETE), "incomplete"))
    return [
        f'<g transform="translate({RIGHT + 18:.1f} {TOP + 10 + 14 * row:.1f})">{sample}{_text(16, 3, label, 7)}</g>'
        for row, (sample, label) in enumerate(entries)
    ]


def _marker(metric: str, cx: float, cy: float, colour_line: bool = False) -> str:
    colour = COLOURS[metric]
    sample = _line(cx - 10, cy, cx + 10, cy, colour, 1.8 * PT) if colour_line else ""
    if metric == FIRST:
        return sample + _dot(cx, cy, 2 * PT, colour, colour)
    side = 7 * PT
    return (
        sample + f'<rect x="{cx - side / 2:.1f}" y="{cy - side / 2:.1f}" width="{side:.1f}" height="{side:.1f}" fill="{colour}"/>'
    )


def _cross(cx: float, cy: float) -> str:
    arm = 3.2 * PT
    return f'<path d="M{cx - arm:.1f} {cy - arm:.1f}L{cx + arm:.1f} {cy + arm:.1f}M{cx - arm:.1f} {cy + arm:.1f}L{cx + arm:.1f} {cy - arm:.1f}" stroke="{REGRESSED}" stroke-width="{2.2 * PT:.1f}"/>'


def _dot(cx: float, cy: float, radius: float, fill: str, stroke: str) -> str:
    return f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{radius:.1f}" fill="{fill}" stroke="{stroke}"/>'


def _line(x1, y1, x2, y2, colour: str, width: float, dashes: str | None = None, opacity: float = 1.0) -> str:
    dash = f' stroke-dasharray="{dashes}"' if dashes else ""
    fade = f' stroke-opacity="{opacity}"' if opacity < 1 else ""
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}" stroke-width="{width:.2f}"{dash}{fade}/>'


def _text(tx: float, ty: float, text: str, size: float, anchor: str = "start", fill: str = "black") -> str:
    return (
        f'<text x="{tx:.1f}" y="{ty:.1f}" font-size="{size * PT:.1f}" text-anchor="{anchor}" fill="{fill}">{escape(text)}</text>'
    )


def _tick_label(tx: float, label: str) -> str:
    """A run's date on two lines under its tick."""
    lines = "".join(
        f'<tspan x="{tx:.1f}" dy="{0 if n == 0 else 9:.0f}">{escape(part)}</tspan>' for n, part in enumerate(label.split("\n"))
    )
    tick = _line(tx, BOTTOM, tx, BOTTOM + 3, "black", 0.8)
    return f'{tick}<text y="{BOTTOM + 13:.1f}" font-size="{7 * PT:.1f}" text-anchor="middle">{lines}</text>'


def _points(pairs: list[tuple[float, float]]) -> str:
    return " ".join(f"{px:.1f},{py:.1f}" for px, py in pairs)
