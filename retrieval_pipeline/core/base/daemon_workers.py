"""Worker threads that never hold the process: a pool like `concurrent.futures.ThreadPoolExecutor`, whose
threads the interpreter joins at exit, so Ctrl-C during a request that hangs (an endpoint that never
answers, a function that sleeps, retries with backoff) would wait for it, and a second Ctrl-C would
print a traceback from that join. These threads are daemons: once the command has said what it kept,
the process ends at once and the requests in flight are abandoned, never awaited.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

_STOP = None


class DaemonWorkers:
    """`count` daemon threads taking calls in the order submitted; use as a context manager, whose exit
    cancels the calls not yet started and lets the threads go without waiting for them."""

    def __init__(self, count: int, name: str):
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._work, name=f"{name} {number}", daemon=True) for number in range(max(1, count))
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, function: Callable[..., Any], *args: Any) -> Future:
        future: Future = Future()
        self._calls.put((future, function, args))
        return future

    def shutdown(self) -> None:
        """The calls still queued are cancelled and each thread told to stop after its current call."""
        while True:
            try:
                call = self._calls.get_nowait()
            except queue.Empty:
                break
            if call is not _STOP:
                call[0].cancel()
        for _ in self._threads:
            self._calls.put(_STOP)

    def __enter__(self) -> DaemonWorkers:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()

    def _work(self) -> None:
        while (call := self._calls.get()) is not _STOP:
            future, function, args = call
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = function(*args)
            except BaseException as error:  # noqa: BLE001 - handed to whoever waits on the future, as an executor does
                future.set_exception(error)
            else:
                future.set_result(result)
