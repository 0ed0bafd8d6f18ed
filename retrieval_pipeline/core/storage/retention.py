"""Retention by age: old runs go, every key's baseline stays.

Pruning is planned whole before anything is deleted: every key is listed and every run it would touch
is read first, so an unreachable store or an unreadable file stops nothing half-way, and `--dry-run`
shows exactly the plan. A run is removed only when both its files parse; a file that does not parse is
reported and left alone, and never counts as a key's latest run, so the latest READABLE run, the latest
READABLE complete run (the baseline `run` would use) and any run the caller protects (the latest
accepted one) always survive.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore, StoredRun
from retrieval_pipeline.core.storage.store_names import PARTIAL_PREFIX, run_file

MAX_RETENTION_DAYS = 36500
"""A hundred years: a longer retention is a typo (or infinity), not a policy."""
SAVE_GRACE = timedelta(hours=1)
"""A crash's leftovers younger than this may belong to a save still in progress: never touched."""


def check_retention_days(days: float) -> float:
    """The one rule for the configuration's retention_days and `prune --older-than-days`."""
    if (
        isinstance(days, bool)
        or not isinstance(days, (int, float))
        or not math.isfinite(days)
        or not 0 <= days <= MAX_RETENTION_DAYS
    ):
        raise InvalidInputError(f"must be a number of days from 0 to {MAX_RETENTION_DAYS}, got {days!r}")
    return float(days)


@dataclass(frozen=True)
class PrunePlan:
    cutoff: datetime
    runs: tuple[StoredRun, ...]
    """Runs older than the cutoff, neither the latest readable run nor the latest readable complete run of their key."""
    leftovers: tuple[str, ...]
    """Files of crashed saves, as paths in the store's file system (`store.shown` gives what a user opens)."""


Protected = Callable[[HistoryKey], str | None]
"""A run id a key must keep besides its latest readable ones (the latest accepted run, the baseline of the
`accepted` policy), or None."""


def plan_prune(
    store: ResultStore, retention: timedelta, now: datetime | None = None, protected: Protected | None = None
) -> PrunePlan:
    now = now or datetime.now(timezone.utc)
    cutoff = now - retention
    runs, leftovers = [], []
    for key in store.keys():
        runs.extend(_removable_runs(store, key, cutoff, protected(key) if protected else None))
        leftovers.extend(_leftovers(store, key, min(cutoff, now - SAVE_GRACE)))
    return PrunePlan(cutoff, tuple(runs), tuple(leftovers))


def _removable_runs(store: ResultStore, key: HistoryKey, cutoff: datetime, protected: str | None) -> list[StoredRun]:
    listed = store.history(key)
    readable = [stored for stored, _ in store.summaries(listed)]
    kept = {readable[0].run_id} if readable else set()
    kept.add(protected)
    baseline = store.baseline(key)
    if baseline is not None:
        kept.add(baseline.run_id)
    return [
        run for run in readable if run.run_id not in kept and run.run_at < cutoff and store.question_file_problem(run) is None
    ]


def prune(
    store: ResultStore,
    retention: timedelta,
    now: datetime | None = None,
    *,
    dry_run: bool = False,
    protected: Protected | None = None,
) -> PrunePlan:
    """The plan, carried out unless `dry_run`."""
    plan = plan_prune(store, retention, now, protected)
    if not dry_run:
        for path in [*(path for run in plan.runs for path in store.run_files(run)), *plan.leftovers]:
            store.delete(path)  # each run's summary first: once it is gone the run is no longer visible
    return plan


def _leftovers(store: ResultStore, key: HistoryKey, before: datetime) -> list[str]:
    """Files of saves that crashed, stamped before `before`: `.partial-` files and question files without
    a summary (their run never appeared). Only names this store writes are considered."""
    listed = {run.run_id for run in store.history(key)}
    found = []
    for side in ("summaries", "questions"):
        for entry in store.entries(side, key):
            stored = run_file(key, entry.base_name.removeprefix(PARTIAL_PREFIX))
            partial = entry.base_name.startswith(PARTIAL_PREFIX)
            orphan = side == "questions" and stored is not None and stored.run_id not in listed
            if stored is not None and (partial or orphan) and stored.run_at < before:
                found.append(entry.path)
    return found
