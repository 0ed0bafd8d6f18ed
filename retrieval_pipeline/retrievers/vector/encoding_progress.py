"""How a long encode tells its progress: after every twentieth of the texts, and whenever `interval`
seconds passed since the last message, so a log file (CI, Dagster's event log) shows a long encode moving
(a chunked SciFact encode once said nothing for 38 minutes) while a short one writes a few lines only.

The clock is a parameter so a test can move time instead of waiting for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

STEPS = 20  # messages a corpus gives at least, whatever its speed
INTERVAL_SECONDS = 15.0  # the longest silence between two messages, as long as one step of texts is quicker


class EncodingProgress:
    """`advance(done)` after each group of texts encoded; `noun` says what they are (documents, chunks)."""

    def __init__(
        self,
        total: int,
        noun: str,
        report: Callable[[str], None],
        interval: float = INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._total, self._noun, self._report = total, noun, report
        self._interval, self._clock = interval, clock
        self._step = max(1, -(-total // STEPS))
        self.started = self._last = clock()
        self._reported = 0

    def advance(self, done: int) -> None:
        now = self._clock()
        if done // self._step > self._reported // self._step or now - self._last >= self._interval or done == self._total:
            rate = done / max(now - self.started, 1e-9)
            self._report(f"encoded {done:,}/{self._total:,} {self._noun} ({rate:,.0f}/s)")
            self._last, self._reported = now, done

    def seconds(self) -> float:
        return self._clock() - self.started
