"""What a kind builds once per process: built once per key, even by threads asking together, and forgotten
by `clear`, as a new process would start."""

from __future__ import annotations

import threading
import time

import pytest

from retrieval_pipeline.retrievers.base.process_cache import ProcessCache


def test_a_value_is_built_once_per_key_even_by_threads_asking_together():
    cache: ProcessCache[int] = ProcessCache()
    builds: list[str] = []

    def build() -> int:
        builds.append("index")
        time.sleep(0.01)
        return 7

    threads = [threading.Thread(target=cache.get, args=("index", build)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert builds == ["index"] and cache.get("index", lambda: 8) == 7


def test_a_failed_build_stores_nothing_and_clear_forgets_and_returns_every_value():
    cache: ProcessCache[str] = ProcessCache()

    def locked() -> str:
        raise RuntimeError("another process has the folder open")

    with pytest.raises(RuntimeError):
        cache.get("client", locked)
    assert cache.get("client", lambda: "opened") == "opened"
    assert cache.clear() == ["opened"]
    assert cache.get("client", lambda: "reopened") == "reopened"
