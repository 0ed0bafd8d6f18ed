"""Charts are real PNGs (the Dagster pop-up's history chart an SVG) small enough to embed in Dagster
metadata, drawn from stored runs."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from datetime import datetime, timezone
from xml.etree import ElementTree

import pytest
from chart_helpers import png_size
from conversation_helpers import conversation_run

from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.services.evaluation.chart_data import ChartPoint, HistoryChartData, history_chart_data
from retrieval_pipeline.core.services.evaluation.leaderboard import Leaderboard, build_leaderboard
from retrieval_pipeline.core.storage.run_summary import RunSummary
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.dagster_layer.metadata.charted import turn_depth_markdown
from retrieval_pipeline.reports.charts import (
    COLOURS,
    REGRESSED,
    leaderboard_chart,
    leaderboard_chart_png,
    markdown_image,
    run_labels,
    turn_depth_chart,
    turn_depth_chart_png,
)
from retrieval_pipeline.reports.history_chart import history_chart, history_chart_png
from retrieval_pipeline.reports.history_svg import BOTTOM, LEFT, RIGHT, TOP, history_chart_svg

SVG = "{http://www.w3.org/2000/svg}"


def test_the_dagster_history_chart_is_a_small_svg_that_marks_regressed_and_incomplete_runs(store):
    data = history_chart_data(store, HistoryKey("demo.set", "bm25"), Tolerances())
    assert any(p.regressed for p in data.points) and any(not p.complete for p in data.points)
    text = history_chart_svg(data)
    svg = ElementTree.fromstring(text)
    assert (svg.get("width"), svg.get("height")) == ("720", "324") and len(text) < 20_000
    assert _legend(svg)[-2:] == ["regressed", "incomplete"]
    assert len(svg.findall(f"{SVG}path[@stroke='{REGRESSED}']")) > 1  # a cross on the regressed run, one in the legend


def test_the_html_reports_history_chart_is_a_small_png(store):
    png = history_chart_png(history_chart_data(store, HistoryKey("demo.set", "bm25"), Tolerances()))
    assert png_size(png)[0] == 720 and len(png) < 100_000


def _deep_history() -> HistoryChartData:
    """Three runs carrying top-1, top-3 (with intervals) and MRR, the middle one the baseline."""
    key = HistoryKey("s", "r")
    points = tuple(
        ChartPoint(
            RunSummary(
                key,
                f"r{i}",
                datetime(2026, 11, 1 + i, tzinfo=timezone.utc),
                complete=True,
                question_count=20,
                errored_count=0,
                cutoffs=(1, 3),
                figures={"top1": 0.4 + i / 20, "top3": 0.7, "mrr@10": 0.5},
                intervals={"top1": (0.3, 0.6), "top3": (0.6, 0.8)},
            )
        )
        for i in range(3)
    )
    return HistoryChartData(key, points, Tolerances(), baseline=points[1])


def _labelled_lines(axes) -> dict[str, float]:
    return {line.get_label(): line.get_linewidth() for line in axes.get_lines() if not line.get_label().startswith("_")}


def test_the_history_chart_in_dagster_draws_only_top1_and_top3_with_the_baseline_and_the_lowest_passing_rate():
    data = _deep_history()
    assert data.metrics == ["top-1", "top-3", "mrr@10"]
    svg = ElementTree.fromstring(history_chart_svg(data))
    assert {line.get("stroke") for line in svg.iter(f"{SVG}polyline")} == {COLOURS["top-1"], COLOURS["top-3"]}
    assert _legend(svg) == ["top-1", "top-3", "baseline rate", "lowest passing rate", "95% interval"]
    # each rate's baseline (45%, 70%) dotted, and the lowest that passes (10 pp below) dashed
    across = [line for line in svg.iter(f"{SVG}line") if (line.get("x1"), line.get("x2")) == (f"{LEFT:.1f}", f"{RIGHT:.1f}")]
    levels = sorted(
        (line.get("stroke-dasharray"), round((BOTTOM - float(line.get("y1"))) / (BOTTOM - TOP) * 105))
        for line in across
        if line.get("stroke-dasharray")
    )
    assert levels == [("1,2", 45), ("1,2", 70), ("5,3", 35), ("5,3", 60)]


def _legend(svg) -> list[str]:
    return [text.text for group in svg.iter(f"{SVG}g") for text in group.iter(f"{SVG}text")]


def test_the_html_reports_deeper_figures_are_drawn_lighter_in_a_panel_of_their_own():
    figure = history_chart(_deep_history())
    main, deeper = figure.axes
    assert set(_labelled_lines(main)) == {"top-1", "top-3"}
    assert set(_labelled_lines(deeper)) == {"mrr@10"}
    assert max(_labelled_lines(deeper).values()) < min(_labelled_lines(main).values())
    assert not deeper.collections  # no interval shading in the lighter panel


def test_a_leaderboard_chart_has_one_panel_per_set_and_grows_with_the_retrievers(store):
    board = build_leaderboard(store)
    one_set = png_size(leaderboard_chart_png(board))
    other = HistoryKey("other.set", "bm25")
    doubled = Leaderboard(board.entries + tuple(replace(e, summary=replace(e.summary, key=other)) for e in board.entries))
    assert png_size(leaderboard_chart_png(doubled))[1] > one_set[1]


@pytest.mark.slow
def test_a_leaderboard_chart_draws_the_intervals_the_entries_carry(store):
    board = build_leaderboard(store)
    intervals = {"top1": (0.2, 0.8), "top3": (0.5, 1.0)}
    with_intervals = Leaderboard(tuple(replace(e, summary=replace(e.summary, intervals=intervals)) for e in board.entries))
    assert png_size(leaderboard_chart_png(with_intervals)) == png_size(leaderboard_chart_png(board))
    assert leaderboard_chart_png(with_intervals) != leaderboard_chart_png(board)


def test_a_set_of_conversations_gets_a_chart_by_turn_depth_with_a_line_per_retriever(tmp_path):
    store = ResultStore(str(tmp_path))
    store.save(conversation_run({"a": "1133", "b": "11-"}))
    store.save(conversation_run({"a": "1111", "b": "111"}, retriever="bm25_rewrite", rewrite=True))
    board = build_leaderboard(store)
    [axes] = turn_depth_chart(board, "demo.conversations").axes
    assert [tick.get_text() for tick in axes.get_xticklabels()] == ["1", "2", "3", "4+"]
    assert set(_labelled_lines(axes)) == {"bm25_current", "bm25_rewrite"}  # top-3; top-1 dashed, unlabelled
    [colour] = [line.get_color() for line in axes.get_lines() if line.get_label() == "bm25_current"]
    current = [line for line in axes.get_lines() if line.get_color() == colour]
    assert [list(line.get_ydata()) for line in current] == [[100.0, 100.0, 50.0, 100.0], [100.0, 100.0, 0.0, 0.0]]
    assert current[1].get_linestyle() == "--"
    assert png_size(turn_depth_chart_png(board, "demo.conversations"))[0] == 720
    assert turn_depth_markdown(board).startswith("![top-1 and top-3 hit rates of demo.conversations by turn depth](data:")


def test_a_board_without_turns_has_no_chart_by_turn_depth(store):
    board = build_leaderboard(store)
    assert turn_depth_markdown(board) is None and turn_depth_chart_png(board, board.set_identifiers[0]) is None


def test_markdown_embeds_the_picture_itself():
    text = markdown_image(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x02\x00\x00\x00\x03", "a chart")
    assert text.startswith("![a chart](data:image/png;base64,") and png_size(text) == (2, 3)


@pytest.mark.slow
def test_importing_the_chart_modules_does_not_import_matplotlib():
    code = (
        "import retrieval_pipeline.reports.charts, retrieval_pipeline.reports.history_chart, "
        "retrieval_pipeline.reports.history_svg, sys; print('matplotlib' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_leaderboard_values_sit_clear_of_their_error_whiskers(store):
    board = build_leaderboard(store)
    intervals = {"top1": (0.1, 0.9), "top3": (0.3, 0.95)}
    figure = leaderboard_chart(
        Leaderboard(tuple(replace(e, summary=replace(e.summary, intervals=intervals)) for e in board.entries))
    )
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    for axes in figure.axes:
        whiskers = [box for lines in axes.collections for box in _segment_boxes(lines)]
        values = [text.get_window_extent(renderer) for text in axes.texts if text.get_text().endswith("%")]
        assert whiskers and values
        assert not [(v, w) for v in values for w in whiskers if v.overlaps(w)]


def _segment_boxes(lines):
    from matplotlib.transforms import Bbox

    return [Bbox(lines.get_transform().transform(segment)) for segment in lines.get_segments()]


def test_runs_in_the_same_minute_get_distinct_labels():
    minute = datetime(2026, 12, 1, 13, 5, tzinfo=timezone.utc)
    times = [minute.replace(hour=12), minute.replace(second=7), minute.replace(second=41), minute.replace(second=41)]
    assert run_labels(times) == ["12-01\n12:05", "12-01\n13:05:07", "12-01\n13:05:41 #1", "12-01\n13:05:41 #2"]
