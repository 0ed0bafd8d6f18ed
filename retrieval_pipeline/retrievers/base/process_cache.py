"""What a kind builds once per process and reuses for every retriever asking the same (a BM25 index, a
corpus's document vectors, a loaded model, a local Qdrant folder's client): one helper, so tests and
benchmarks start afresh, as a new process would, through its public `clear` instead of private dictionaries.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

Value = TypeVar("Value")


class ProcessCache(Generic[Value]):
    """Values by key, each built at most once: `get` builds under a lock, so two threads asking for the
    same index build it once (a failed build stores nothing and raises to the asker)."""

    def __init__(self) -> None:
        self._values: dict[Hashable, Value] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, build: Callable[[], Value]) -> Value:
        with self._lock:
            if key not in self._values:
                self._values[key] = build()
            return self._values[key]

    def clear(self) -> list[Value]:
        """Forgets every value, as a new process starts; returns them, for a caller that must close them."""
        with self._lock:
            values = list(self._values.values())
            self._values.clear()
        return values
