"""Baseline policy: which stored run a new run is compared with.

`previous` (the default): the latest complete run. `accepted`: the latest accepted run,
so a regression does not quietly become the next night's baseline; the check keeps failing until a
person accepts the new level. A run is accepted automatically when its check passed (see
`regression.AUTO_ACCEPTED`; a run saved without a check counts as accepted, as it is a baseline under
the previous-run rule), or explicitly with `accept_run`, which writes one small
Parquet row of its own: runs are never rewritten, and the record of who accepted what only grows.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from retrieval_pipeline.core.base.errors import NotAcceptableError, UnknownIdentifierError
from retrieval_pipeline.core.scoring.checks.verdicts import AUTO_ACCEPTED
from retrieval_pipeline.core.scoring.results import RunResult, as_utc, new_run_id, utc_now
from retrieval_pipeline.core.services.configuration.schema import BaselinePolicy
from retrieval_pipeline.core.storage.run_tables import acceptance_table
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore, StoredRun

_AUTO_ACCEPTED_VALUES = frozenset(verdict.value for verdict in AUTO_ACCEPTED)


@dataclass(frozen=True)
class Acceptance:
    """One explicit acceptance; `accepted_by` is None when nobody could be named."""

    key: HistoryKey
    run_id: str
    accepted_at: datetime
    accepted_by: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "accepted_at", as_utc(self.accepted_at))


def auto_accepted(verdict: str | None) -> bool:
    """A verdict this version does not know (added later) is not accepted: safe when in doubt."""
    return verdict is None or verdict in _AUTO_ACCEPTED_VALUES


def acceptances(store: ResultStore, key: HistoryKey) -> dict[str, Acceptance]:
    """Explicit acceptances by run id; a run accepted twice keeps its latest acceptance."""
    found: dict[str, Acceptance] = {}
    for table in store.acceptance_tables(key):
        for row in table.to_pylist():
            found[row["run_id"]] = Acceptance(key, row["run_id"], row["accepted_at"], row["accepted_by"])
    return found


def accepted_runs(store: ResultStore, key: HistoryKey) -> Iterator[StoredRun]:
    """The accepted complete runs, newest first, reading one summary row per run as far as asked;
    a run whose summary cannot be read is skipped (and reported by the store)."""
    explicit = acceptances(store, key)
    for stored, row in store.summaries(run for run in store.history(key) if run.complete):
        if stored.run_id in explicit or auto_accepted(row["verdict"]):
            yield stored


def latest_accepted(store: ResultStore, key: HistoryKey) -> StoredRun | None:
    return next(accepted_runs(store, key), None)


def load_baseline(
    store: ResultStore, key: HistoryKey, policy: BaselinePolicy = BaselinePolicy.PREVIOUS, pinned_run_id: str | None = None
) -> RunResult | None:
    """A pinned run wins under either policy: pinning is itself a person's explicit choice."""
    if pinned_run_id is not None or policy is BaselinePolicy.PREVIOUS:
        return store.baseline(key, pinned_run_id)
    return store.first_readable(accepted_runs(store, key))


def accept_run(
    store: ResultStore, key: HistoryKey, run_id: str, by: str | None = None, now: datetime | None = None
) -> Acceptance:
    """Make a stored complete run acceptable as a baseline. An unknown or incomplete run changes nothing."""
    runs = store.history(key)
    stored = next((run for run in runs if run.run_id == run_id), None)
    if stored is None:
        raise UnknownIdentifierError(f"run of {key.parts}", run_id, [run.run_id for run in runs])
    if not stored.complete:
        raise NotAcceptableError(
            f"run {run_id} of {key.parts} is incomplete (the retriever failed on some questions) and cannot be accepted"
        )
    acceptance = Acceptance(key, run_id, now or utc_now(), by)
    store.save_acceptance(key, new_run_id(acceptance.accepted_at), acceptance_table(acceptance))
    return acceptance


def latest_accepted_run_id(store: ResultStore, key: HistoryKey) -> str | None:
    """For retention: the baseline of the `accepted` policy survives pruning like the latest run does."""
    stored = latest_accepted(store, key)
    return stored.run_id if stored is not None else None
