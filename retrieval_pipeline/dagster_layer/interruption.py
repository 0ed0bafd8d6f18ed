"""What an interrupted `retrieval-eval nightly` (Ctrl-C) leaves behind, made consistent before it exits.

An evaluation saves its run in the result store before Dagster records it, so an interrupt in between
would leave a complete run, the next baseline, that Dagster never recorded. After an interrupt every run
this command saved is compared with what the instance recorded, and any not recorded is kept as
incomplete, never a baseline (Ctrl-C is ignored meanwhile). Dagster turns a SIGINT inside a step into a
failed run and forgets one that arrives between steps; `InterruptWatch` turns both back into the
interrupt they were (the signal wake-up file descriptor receives every signal whoever handles it).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

NOT_RECORDED = "interrupted (Ctrl-C) before Dagster recorded this run; kept for inspection, never a baseline"


class InterruptWatch:
    """Whether SIGINT arrived since the watch began, whatever handler Dagster had installed meanwhile."""

    def __enter__(self) -> InterruptWatch:
        self._seen, self._read, self._write = False, None, None
        if threading.current_thread() is threading.main_thread():  # signals reach only the main thread
            self._read, self._write = os.pipe()
            os.set_blocking(self._read, False)
            os.set_blocking(self._write, False)
            self._previous = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        return self

    def __exit__(self, *exc_info) -> None:
        if self._read is not None:
            signal.set_wakeup_fd(self._previous)
            os.close(self._read)
            os.close(self._write)

    def raise_if_interrupted(self, interrupted_run: bool = False) -> None:
        """A KeyboardInterrupt after a SIGINT, or when Dagster interrupted the run that just ended."""
        try:
            self._seen = self._seen or (self._read is not None and signal.SIGINT in os.read(self._read, 4096))
        except BlockingIOError:  # nothing arrived
            pass
        if self._seen or interrupted_run:
            raise KeyboardInterrupt


@dataclass(frozen=True)
class InterruptedNightly:
    finished: tuple[str, ...]
    """The pairs whose run Dagster recorded, materialization and check, as `set × retriever`."""
    unfinished: tuple[str, ...]
    marked_incomplete: tuple[str, ...]
    """Runs this command saved that Dagster had not recorded, now stored as incomplete."""

    def sentence(self) -> str:
        total = len(self.finished) + len(self.unfinished)
        parts = [f"{len(self.finished)} of {total} evaluations finished and recorded in Dagster"]
        if self.finished:
            parts[0] += f" ({', '.join(self.finished)})"
        if self.unfinished:
            parts.append(f"not finished: {', '.join(self.unfinished)}")
        if self.marked_incomplete:
            parts.append(
                f"{len(self.marked_incomplete)} run(s) saved but not recorded by Dagster kept as incomplete, never a "
                f"baseline ({', '.join(self.marked_incomplete)})"
            )
        return "interrupted (Ctrl-C): " + "; ".join(parts)


def settle(instance, store: ResultStore, pairs: Sequence[tuple[str, str]], started: datetime) -> InterruptedNightly:
    """Every run saved since `started` for `pairs` (set, retriever) either recorded by Dagster or marked incomplete."""
    with interrupts_ignored():
        recorded = recorded_run_ids(instance, store, pairs, started)
        finished, unfinished, marked = [], [], []
        for pair in pairs:
            saved = store.saved_since(HistoryKey(*pair), started)
            for run in saved:
                if run.complete and run.run_id not in recorded:
                    store.mark_incomplete(run, NOT_RECORDED)
                    marked.append(run.run_id)
            (finished if any(run.run_id in recorded for run in saved) else unfinished).append(" × ".join(pair))
    return InterruptedNightly(tuple(finished), tuple(unfinished), tuple(marked))


def recorded_run_ids(instance, store: ResultStore, pairs: Iterable[tuple[str, str]], since: datetime) -> set[str]:
    """The runs saved since `since` of the pairs whose evaluation partition Dagster recorded since, both its
    materialization and its check evaluation. A nightly evaluates each pair once, so a recorded partition
    is the run the store saved for it."""
    from dagster import AssetKey, DagsterEventType, MultiPartitionKey, RunsFilter

    from retrieval_pipeline.dagster_layer.checks import CHECK_NAME, EVALUATION_ASSET
    from retrieval_pipeline.dagster_layer.partitions import RETRIEVER_DIMENSION, SET_DIMENSION

    materialized, checked = set(), set()
    kinds = {DagsterEventType.ASSET_MATERIALIZATION, DagsterEventType.ASSET_CHECK_EVALUATION}
    for run in instance.get_runs(filters=RunsFilter(created_after=since)):
        for entry in instance.all_logs(run.run_id, of_type=kinds):
            event = entry.dagster_event
            if event.event_type == DagsterEventType.ASSET_MATERIALIZATION:
                if event.asset_key == AssetKey(EVALUATION_ASSET):
                    materialized.add(event.partition)
            elif event.asset_check_evaluation_data.asset_check_key.name == CHECK_NAME:
                checked.add(event.asset_check_evaluation_data.partition)
    return {
        run.run_id
        for pair in pairs
        if str(MultiPartitionKey({SET_DIMENSION: pair[0], RETRIEVER_DIMENSION: pair[1]})) in materialized & checked
        for run in store.saved_since(HistoryKey(*pair), since)
    }


@contextmanager
def interrupts_ignored() -> Iterator[None]:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
