"""The chart worker: a second process draws the charts a range of partitions needs, exactly as drawn in place."""

from __future__ import annotations

import math
import time

import pytest

from retrieval_pipeline.core.scoring.tolerances import Tolerances
from retrieval_pipeline.core.storage.store import HistoryKey
from retrieval_pipeline.reports.chart_worker import ChartDrawer, chart_drawer, shared_drawer
from retrieval_pipeline.reports.charts import stored_history_chart_png

KEY = HistoryKey("demo.set", "bm25")


@pytest.mark.slow
def test_a_worker_draws_the_very_chart_drawn_in_place(store):
    arguments = (store.uri, KEY, Tolerances(), None)
    with ChartDrawer(parallel=False) as in_place, ChartDrawer(parallel=True) as worker:
        drawings = [worker.draw(stored_history_chart_png, *arguments) for _ in range(3)]
        expected = in_place.draw(stored_history_chart_png, *arguments).result()
        assert [drawing.result() for drawing in drawings] == [expected] * 3
    assert expected.startswith(b"\x89PNG")


@pytest.mark.slow
def test_a_chart_that_fails_in_the_worker_fails_with_its_error():
    with ChartDrawer(parallel=True) as worker:
        drawing = worker.draw(math.sqrt, -1.0)
        with pytest.raises(RuntimeError, match="ValueError: math domain error"):
            drawing.result()
        assert worker.draw(math.sqrt, 4.0).result() == 2.0  # the worker goes on


@pytest.mark.slow
def test_what_a_dead_worker_had_not_answered_is_drawn_in_place():
    with ChartDrawer(parallel=True) as worker:
        process = worker._worker._process
        in_flight = worker.draw(time.sleep, 0.2)
        process.kill()
        process.wait()
        assert in_flight.result() is None  # slept here instead
        assert worker.draw(math.factorial, 10).result() == 3628800


@pytest.mark.slow
def test_stopping_the_drawer_stops_its_worker_process():
    worker = ChartDrawer(parallel=True)
    process = worker._worker._process
    assert worker.draw(math.factorial, 5).result() == 120
    worker.close()
    assert process.poll() is not None


@pytest.mark.slow
def test_steps_inside_a_shared_drawer_use_it_and_others_get_their_own(monkeypatch):
    monkeypatch.setattr("retrieval_pipeline.reports.chart_worker._usable_cores", lambda: 2)
    with shared_drawer(charts=24):
        with chart_drawer(1) as first, chart_drawer(24) as second:
            assert first is second and first._worker is not None
    with chart_drawer(1) as alone:
        assert alone._worker is None  # one chart: drawn in place, no process started


def test_on_one_core_even_many_charts_are_drawn_in_place(monkeypatch):
    monkeypatch.setattr("retrieval_pipeline.reports.chart_worker._usable_cores", lambda: 1)
    with chart_drawer(200) as drawer:
        assert drawer._worker is None


@pytest.mark.slow
def test_a_chart_drawn_ahead_is_handed_to_the_first_step_asking_for_it():
    with ChartDrawer(parallel=True) as worker:
        worker.draw_ahead(math.factorial, 12)
        handed = worker.draw(math.factorial, 12)
        assert handed.result() == 479001600
        assert worker.draw(math.factorial, 12) is not handed  # handed once; the next asks anew
    with ChartDrawer(parallel=False) as in_place:
        in_place.draw_ahead(math.factorial, 12)  # nothing to gain in place: nothing is drawn
        assert not in_place._ahead
