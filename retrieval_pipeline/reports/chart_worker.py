"""Charts drawn in a second process while this one goes on evaluating.

Why: a history chart costs about as much matplotlib time as evaluating a small partition, and a run over
a range of partitions (`retrieval-eval nightly`) would draw one per partition, one after the other, on
one core. A worker process draws them on another core while the step evaluates and records the next
partitions, and imports matplotlib there, not here.

The worker is `python -m retrieval_pipeline.reports.chart_worker`, fed pickled calls on its stdin and
answering on its stdout. Not multiprocessing: its spawn start method runs the parent's main script
again in the child (a script calling `run_nightly` without a `__main__` guard would run a second
nightly), and fork copies a Dagster run worker's threads and locks into the child.

A worker only pays where there are many charts and a second core: starting one (a fresh interpreter
importing matplotlib) costs more than a few charts, so fewer charts, or one core, are drawn in place. A worker that
dies takes no chart with it: what it had not returned is drawn in place. A process about to run many
steps in its own thread (`nightly`) opens `shared_drawer()` first: one worker, warm by the time the
evaluations start, then draws every step's charts, the leaderboard's included.
"""

from __future__ import annotations

import itertools
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

MIN_CHARTS_FOR_WORKER = 4
STOP_SECONDS = 60.0
"""How long a stopping worker may take to finish the chart in hand before it is killed."""


class WorkerGone(RuntimeError):
    """The worker process ended before answering."""


def worth_a_worker(charts: int) -> bool:
    return charts >= MIN_CHARTS_FOR_WORKER and _usable_cores() > 1


def _usable_cores() -> int:
    """The cores this process may run on (macOS has no affinity call: every core counts)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@dataclass(frozen=True)
class Drawing:
    """A chart being drawn: ready or not, and its result (drawn in place if the worker died)."""

    future: Future
    draw: Callable[..., Any]
    arguments: tuple

    def ready(self) -> bool:
        return self.future.done()

    def result(self) -> Any:
        try:
            return self.future.result()
        except WorkerGone:
            return self.draw(*self.arguments)


class ChartDrawer:
    """Draws in place, or in one worker process when `parallel`; a context manager that stops the worker."""

    def __init__(self, parallel: bool) -> None:
        self._worker = _Worker() if parallel else None
        self._ahead: dict[bytes, Drawing] = {}

    def draw(self, draw: Callable[..., Any], *arguments: Any) -> Drawing:
        """`draw` must be a module-level function (the worker imports it by name)."""
        if self._ahead:
            ahead = self._ahead.pop(pickle.dumps((draw, arguments)), None)
            if ahead is not None:
                return ahead
        if self._worker is None or not self._worker.alive:
            future: Future = Future()
            future.set_result(draw(*arguments))
        else:
            future = self._worker.submit(draw, arguments)
        return Drawing(future, draw, arguments)

    def draw_ahead(self, draw: Callable[..., Any], *arguments: Any) -> None:
        """Starts, in the worker, a chart a step is about to ask for (`nightly`: the leaderboard's, drawn
        while Dagster sets up the leaderboard's run); that step's `draw` with equal arguments gets it."""
        if self._worker is not None:
            self._ahead[pickle.dumps((draw, arguments))] = self.draw(draw, *arguments)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None

    def __enter__(self) -> ChartDrawer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


_SHARED: ContextVar[ChartDrawer | None] = ContextVar("retrieval_pipeline_chart_drawer", default=None)


@contextmanager
def shared_drawer(charts: int) -> Iterator[None]:
    """Steps run in this thread inside the block draw with one drawer, started now."""
    with ChartDrawer(parallel=worth_a_worker(charts)) as drawer:
        token = _SHARED.set(drawer)
        try:
            yield
        finally:
            _SHARED.reset(token)


def chart_drawer(charts: int) -> AbstractContextManager[ChartDrawer]:
    """For a step about to draw `charts` charts: the shared drawer if one is open, else its own."""
    shared = _SHARED.get()
    return nullcontext(shared) if shared is not None else ChartDrawer(parallel=worth_a_worker(charts))


class _Worker:
    def __init__(self) -> None:
        # The parent's import path, so the child imports this very package (a checkout, a test's path).
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self._process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self._ids = itertools.count()
        self._waiting: dict[int, Future] = {}
        self._lock = threading.Lock()
        self.alive = True
        self._reader = threading.Thread(target=self._read_answers, name="chart-worker-answers", daemon=True)
        self._reader.start()

    def submit(self, draw: Callable[..., Any], arguments: tuple) -> Future:
        future: Future = Future()
        with self._lock:
            if not self.alive:
                future.set_exception(WorkerGone("the chart worker has stopped"))
                return future
            number = next(self._ids)
            self._waiting[number] = future
        try:
            pickle.dump((number, draw, arguments), self._process.stdin)
            self._process.stdin.flush()
        except (BrokenPipeError, OSError):
            self._gone()
        return future

    def stop(self) -> None:
        try:
            self._process.stdin.close()
        except OSError:
            pass
        try:
            self._process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._reader.join()

    def _read_answers(self) -> None:
        while True:
            try:
                number, ok, value = pickle.load(self._process.stdout)
            except (EOFError, OSError, pickle.UnpicklingError):
                break
            with self._lock:
                future = self._waiting.pop(number)
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)
        self._gone()

    def _gone(self) -> None:
        with self._lock:
            self.alive = False
            waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(WorkerGone("the chart worker ended before answering"))


def _serve() -> None:
    """The worker's loop: one answer per call, in order, until the parent closes its stdin."""
    calls = sys.stdin.buffer
    # The answers get their own descriptor and stdout becomes stderr, so nothing a library prints
    # (from Python or from C) can corrupt them.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    import matplotlib.backends.backend_agg  # noqa: F401  (imported while the parent evaluates)
    import matplotlib.figure  # noqa: F401

    import retrieval_pipeline.reports.charts  # noqa: F401

    while True:
        try:
            number, draw, arguments = pickle.load(calls)
        except EOFError:
            # Every answer is flushed; the interpreter's teardown of matplotlib would only
            # keep the parent waiting.
            os._exit(0)
        try:
            answer = (number, True, draw(*arguments))
        except Exception as error:
            answer = (number, False, RuntimeError(f"{type(error).__name__}: {error}"))
        pickle.dump(answer, answers)
        answers.flush()


if __name__ == "__main__":
    _serve()
