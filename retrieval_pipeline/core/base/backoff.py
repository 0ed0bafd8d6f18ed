"""Asking again after a failure that may pass, each wait longer than the last: the one backoff behind
the runner asking a retriever and every adapter asking a JSON service.

The caller decides what is transient (only it knows whether a status or an exception may pass), so an
attempt says so by raising `Transient`; anything else it raises ends the asking at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class Transient(Exception):
    """A failure asking again may cure. `cause` is what retries are counted by and the last one is named
    by; `at_least` is a wait the service asked for (Retry-After), never cut short by the backoff;
    `unreachable` says no service answered, which the runner's fail-fast counts."""

    def __init__(self, cause: str, *, at_least: float = 0.0, unreachable: bool = False):
        super().__init__(cause)
        self.cause = cause
        self.at_least = at_least
        self.unreachable = unreachable


def with_backoff(
    attempt: Callable[[], T],
    attempts: int,
    backoff_seconds: float,
    factor: float = 2.0,
    on_retry: Callable[[Transient], None] = lambda failure: None,
) -> T:
    """`attempt()` asked up to `attempts` times while it fails `Transient`, waiting `backoff_seconds`,
    then `factor` times longer before each next one; `on_retry` hears each failure asked again. The last
    attempt's `Transient` reaches the caller, who words the final error."""
    wait = backoff_seconds
    for _ in range(attempts - 1):
        try:
            return attempt()
        except Transient as failure:
            on_retry(failure)
            time.sleep(max(wait, failure.at_least))
            wait *= factor
    return attempt()
