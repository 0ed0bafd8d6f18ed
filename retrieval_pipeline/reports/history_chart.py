"""A pair's history chart for the HTML report: its last runs' top-1 and top-3 against the baseline and the
lowest rate that passes, and below them, lighter, in a panel of their own, the deeper figures, as a PNG
drawn with the shared figure of `charts.py`. The Dagster UI's pop-up draws the top panel alone, without
matplotlib, for every evaluation (`history_svg.py`)."""

from __future__ import annotations

from retrieval_pipeline.core.scoring.measures import SCORE
from retrieval_pipeline.core.services.evaluation.chart_data import ChartPoint, HistoryChartData
from retrieval_pipeline.reports.charts import (
    COLOURS,
    DEEPEST,
    FIRST,
    INCOMPLETE,
    MAX_DATE_LABELS,
    OTHER_COLOURS,
    REGRESSED,
    new_figure,
    png_bytes,
    run_labels,
)


def history_chart_png(data: HistoryChartData) -> bytes:
    return png_bytes(history_chart(data))


def history_chart(data: HistoryChartData):
    """Top-1 and top-3 with their intervals, the baseline and the band below it a run must stay within:
    what the regression check reads; below, a lighter panel with every other charted figure (top-k, MRR,
    nDCG) the runs carry."""
    others = [metric for metric in data.metrics if metric not in COLOURS]
    figure, panels = _history_figure(bool(others))
    main = panels[0]
    for metric in data.metrics:
        if metric in COLOURS:
            _draw_metric(main, data.points, metric, COLOURS[metric])
            _draw_band(main, data, metric, COLOURS[metric])
    for axes in panels:
        _mark_runs(axes, data, annotate=axes is main)
    _legend(main, data)
    if others:
        lower = panels[1]
        for index, metric in enumerate(others):
            _draw_metric(lower, data.points, metric, OTHER_COLOURS[index % len(OTHER_COLOURS)])
        lower.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        scores = any(f.measure.scale == SCORE for f in data.figures if f.short in others)
        _y_axis(lower, "deeper figures (%)" + (", scores × 100" if scores else ""))
    _x_axis(panels[-1], data)
    # A given `y` spares matplotlib from measuring every tick label to place the title.
    key = data.key
    main.set_title(
        f"{key.set_identifier} × {key.retriever_identifier}: last {len(data.points)} runs, {data.labels}", fontsize=10, y=1.0
    )
    return figure


def _history_figure(deeper: bool):
    """Fixed margins: every label of this chart has a bounded width, and a constrained layout, which
    measures every text twice, was a large part of the chart's cost."""
    margins = {"left": 0.07, "right": 0.79, "top": 0.91, "bottom": 0.17}
    if not deeper:
        figure, axes = new_figure(3.6, margins)
        return figure, [axes]
    figure, _ = new_figure(5.4, {**margins, "top": 0.94, "bottom": 0.11, "hspace": 0.12}, panels=2, heights=(2, 1))
    return figure, list(figure.axes)


def _mark_runs(axes, data: HistoryChartData, *, annotate: bool) -> None:
    """Regressed and incomplete runs, edits of the set and the baseline: the same runs on every panel."""
    for x, point in enumerate(data.points):
        if point.regressed:
            axes.axvline(x, color=REGRESSED, alpha=0.25, linewidth=6, zorder=0)
        elif not point.complete:
            axes.axvline(x, color=INCOMPLETE, alpha=0.2, linewidth=6, linestyle=":", zorder=0)
    for x in data.set_edits:
        axes.axvline(x - 0.5, color="#555555", linestyle=":", linewidth=1)
        if annotate:
            axes.annotate(
                "set edited",
                (x - 0.5, 0.0),
                xycoords=("data", "axes fraction"),
                xytext=(3, 3),
                textcoords="offset points",
                fontsize=7,
                color="#555555",
            )
    if data.baseline_index is not None:
        axes.axvline(data.baseline_index, color="black", linestyle="--", linewidth=1)
        if annotate:
            axes.annotate(
                "baseline",
                (data.baseline_index, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(3, -10),
                textcoords="offset points",
                fontsize=8,
            )


def _x_axis(axes, data: HistoryChartData) -> None:
    """At most ten dates under the axis, so they never overlap (every run keeps its tick)."""
    points = data.points
    every = -(-len(points) // MAX_DATE_LABELS)
    labels = run_labels([point.summary.run_at for point in points])
    axes.set_xticks(range(len(points)), [label if x % every == 0 else "" for x, label in enumerate(labels)], fontsize=7)
    axes.set_xlim(-0.5, max(len(points) - 0.5, 0.5))


def _draw_metric(axes, points: tuple[ChartPoint, ...], metric: str, colour: str) -> None:
    complete = [(x, p) for x, p in enumerate(points) if p.complete and p.rate(metric) is not None]
    main = metric in COLOURS
    # The first tested rate is drawn over the deepest with a smaller marker, so equal rates still show both.
    axes.plot(
        [x for x, _ in complete],
        [100 * p.rate(metric) for _, p in complete],
        color=colour,
        marker="o" if metric == FIRST else "s",
        markersize={FIRST: 4, DEEPEST: 7}.get(metric, 3),
        linewidth=1.8 if main else 1,
        alpha=1 if main else 0.7,
        label=metric,
        zorder=4 if metric == FIRST else 3,
    )
    bounds = [(x, p.interval(metric)) for x, p in complete if p.interval(metric) is not None]
    if bounds and main:  # a deeper figure's interval would crowd its lighter panel
        axes.fill_between(
            [x for x, _ in bounds],
            [100 * b[0] for _, b in bounds],
            [100 * b[1] for _, b in bounds],
            color=colour,
            alpha=0.12,
            linewidth=0,
        )
    for x, point in enumerate(points):
        rate = point.rate(metric)
        if rate is None:
            continue
        if point.regressed:
            axes.plot(x, 100 * rate, marker="X", markersize=8, color=REGRESSED, zorder=5)
        elif not point.complete:
            axes.plot(x, 100 * rate, marker="o", markersize=6, markerfacecolor="white", markeredgecolor=INCOMPLETE, zorder=5)


def _draw_band(axes, data: HistoryChartData, metric: str, colour: str) -> None:
    """The baseline's rate (dotted) and the lowest rate that passes (dashed): a point below the dashed line
    fails the check. Lines, not a shaded band, so they never hide the 95% interval shaded around the line."""
    tolerance = data.tolerance(metric)
    rate = data.baseline_rate(metric)
    if tolerance is None or rate is None:
        return
    axes.axhline(100 * rate, color=colour, linestyle=":", linewidth=1, alpha=0.9)
    axes.axhline(100 * max(rate - tolerance, 0.0), color=colour, linestyle="--", linewidth=1.2)


def _legend(axes, data: HistoryChartData) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles, _ = axes.get_legend_handles_labels()
    if data.baseline is not None and any(data.tolerance(metric) is not None for metric in COLOURS):
        rescored = " (rescored)" if data.rescored_baseline else ""
        handles.append(Line2D([], [], color="#555555", linestyle=":", label=f"baseline rate{rescored}"))
        handles.append(Line2D([], [], color="#555555", linestyle="--", label="lowest passing rate"))
    if any(p.intervals for p in data.points):
        handles.append(Patch(color=COLOURS[FIRST], alpha=0.12, label="95% interval"))
    if any(p.regressed for p in data.points):
        handles.append(Line2D([], [], marker="X", color=REGRESSED, linestyle="", label="regressed"))
    if any(not p.complete for p in data.points):
        handles.append(
            Line2D([], [], marker="o", markerfacecolor="white", markeredgecolor=INCOMPLETE, linestyle="", label="incomplete")
        )
    axes.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    _y_axis(axes, "hit rate (%)")


def _y_axis(axes, label: str) -> None:
    axes.set_ylabel(label, fontsize=8)
    axes.set_ylim(0, 105)
    axes.grid(axis="y", alpha=0.3)
