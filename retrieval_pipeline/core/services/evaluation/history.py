"""A key's stored runs as summaries, newest first, each with its deltas to the run it was compared with.

Only the one-row summary files are read, never the per-question files, so listing a long history
stays cheap. A run's deltas are the ones its check found, stored with it (on the questions unchanged
since its baseline); a run saved without a check is shown against the previous complete run. An
incomplete run is never compared (its errored questions are not misses), so it has no delta.

Each entry also says what its check found (`verdict`), whether it was accepted explicitly, and whether
it is the baseline the next run will be compared with under the configured policy. A run whose summary
cannot be read is left out (the store reports it), as `run` leaves it out when it looks for a baseline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from itertools import islice

from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.services.evaluation.baselines import (
    Acceptance,
    BaselinePolicy,
    acceptances,
    auto_accepted,
    latest_accepted,
)
from retrieval_pipeline.core.storage.run_summary import RunSummary
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore, StoredRun


@dataclass(frozen=True)
class HistoryEntry:
    summary: RunSummary
    baseline_run_id: str | None = None
    deltas: Mapping[str, float] = field(default_factory=dict)
    """The hit-rate changes against `baseline_run_id` by key (`top1`, `top3`); empty when not compared."""
    acceptance: Acceptance | None = None
    is_baseline: bool = False
    """The run the next evaluation compares with, under the policy the history was read with."""
    rescored: tuple[str, ...] | None = None
    """Read under the current labels (rescored_history.py): the run's relabelled questions; None when
    the figures are the stored ones."""
    not_rescored: str | None = None
    """Why the run could not be rescored: its figures are the stored ones."""
    not_rescored_questions: tuple[tuple[str, str], ...] = ()
    """(question id, why) for each question of a rescored run the current set changed but that could not
    take its labels (reworded): left out of the run's figures."""

    @property
    def accepted(self) -> bool:
        return self.summary.complete and (self.acceptance is not None or auto_accepted(self.summary.verdict))

    @property
    def status(self) -> str:
        """What the check found, who accepted the run, and "baseline" on the run the next one compares with."""
        if not self.summary.complete:
            return "incomplete"
        parts = [_VERDICT_LABELS.get(self.summary.verdict, self.summary.verdict or "")]
        if self.acceptance is not None:
            parts.append(f"accepted by {self.acceptance.accepted_by}" if self.acceptance.accepted_by else "accepted")
        if self.is_baseline:
            parts.append("baseline")
        return ", ".join(part for part in parts if part)


_VERDICT_LABELS = {"baseline": "first run", "not_comparable": "not comparable"}
"""The stored verdict `baseline` means the run had none to compare with; "baseline" in the status
marks the current one."""


def run_history(
    store: ResultStore, key: HistoryKey, limit: int | None = None, policy: BaselinePolicy = BaselinePolicy.PREVIOUS
) -> list[HistoryEntry]:
    """Newest first, at most `limit` readable entries; for older runs, reads the summary of the run before them."""
    stored = store.history(key)
    summaries = {run.run_id: RunSummary.of(key, row) for run, row in islice(store.summaries(stored), limit)}
    shown = [run for run in stored if run.run_id in summaries]
    complete = [run for run in stored if run.complete]
    position = {run.run_id: index for index, run in enumerate(complete)}
    if policy is BaselinePolicy.ACCEPTED:
        current = latest_accepted(store, key)
    else:
        current = next((run for run, _ in store.summaries(complete)), None)
    explicit = acceptances(store, key)
    entries = []
    for run in shown:
        summary = summaries[run.run_id]
        entry = HistoryEntry(summary, acceptance=explicit.get(run.run_id), is_baseline=current == run)
        if summary.verdict is not None:
            entry = replace(entry, baseline_run_id=summary.baseline_run_id, deltas=summary.deltas)
        elif run.complete:
            entry = _against_previous(store, entry, complete[position[run.run_id] + 1 :], summaries)
        entries.append(entry)
    return entries


def _against_previous(store: ResultStore, entry: HistoryEntry, older_complete: list[StoredRun], read: dict) -> HistoryEntry:
    """A run saved without a check is shown against the previous complete run, the rule a check without a
    policy applies; its deltas are computed from the two summaries."""
    for previous in older_complete:
        if previous.run_id not in read:
            found = next(store.summaries([previous]), None)
            if found is None:  # unreadable: reported by the store, and no run's baseline
                continue
            read[previous.run_id] = RunSummary.of(previous.key, found[1])
        baseline = read[previous.run_id]
        deltas = {key: entry.summary.figures[key] - baseline.figures[key] for key in (figure.key for figure in TESTED)}
        return replace(entry, baseline_run_id=baseline.run_id, deltas=deltas)
    return entry
