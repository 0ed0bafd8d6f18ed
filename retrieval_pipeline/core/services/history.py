"""A key's stored runs as summaries, newest first, each with its deltas to the run it was compared with.

Only the one-row summary files are read, never the per-question files, so listing a long history
stays cheap. A run's deltas are the ones its check found, stored with it (on the questions unchanged
since its baseline); for runs stored before that was recorded, they are recomputed against the previous
complete run, the only rule there was. An incomplete run is never compared (its errored questions are
not misses), so it has no delta.

Each entry also says what its check found (`verdict`), whether it was accepted explicitly, and whether
it is the baseline the next run will be compared with under the configured policy. A run whose summary
cannot be read is left out (the store reports it), as `run` leaves it out when it looks for a baseline.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from itertools import islice

from retrieval_pipeline.core.retrieval.latency import PER_QUESTION
from retrieval_pipeline.core.services.baselines import Acceptance, BaselinePolicy, acceptances, auto_accepted, latest_accepted
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore, StoredRun


@dataclass(frozen=True)
class RunSummary:
    key: HistoryKey
    run_id: str
    run_at: datetime
    complete: bool
    question_count: int
    errored_count: int
    top1_hit_count: int
    top1_hit_rate: float
    top3_hit_count: int
    top3_hit_rate: float
    latency_p95_ms: float | None = None
    index_version: str | None = None
    hit_rates: tuple[tuple[int, float], ...] = ()
    """(cut-off, hit rate) for every cut-off the run was scored at, top-1 and top-3 included."""
    verdict: str | None = None
    """None for a run stored before verdicts were recorded (so are the three fields below)."""
    baseline_run_id: str | None = None
    top1_delta: float | None = None
    """On the questions the check compared (the unchanged ones)."""
    top3_delta: float | None = None
    set_fingerprint: str | None = None
    """None for a run stored before set fingerprints were recorded."""
    hit_rate_intervals: tuple[tuple[int, float, float], ...] = ()
    """(cut-off, low, high): the 95% Wilson interval of each hit rate; empty for runs stored without them."""
    metrics: tuple[tuple[str, float], ...] = ()
    """Ranking metrics (`mrr@D`, `ndcg@D`, `recall@k`); empty for runs stored without them."""
    latency_mode: str = PER_QUESTION
    latency_batch_mean_ms: float | None = None


@dataclass(frozen=True)
class HistoryEntry:
    summary: RunSummary
    baseline_run_id: str | None = None
    top1_delta: float | None = None
    top3_delta: float | None = None
    acceptance: Acceptance | None = None
    is_baseline: bool = False
    """The run the next evaluation compares with, under the policy the history was read with."""

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


def run_summary(stored: StoredRun, row: dict) -> RunSummary:
    return RunSummary(
        key=stored.key,
        run_id=row["run_id"],
        run_at=row["run_at"],
        complete=bool(row["complete"]),
        question_count=row["question_count"],
        errored_count=row["errored_count"],
        top1_hit_count=row["top1_hit_count"],
        top1_hit_rate=row["top1_hit_rate"],
        top3_hit_count=row["top3_hit_count"],
        top3_hit_rate=row["top3_hit_rate"],
        latency_p95_ms=row.get("latency_p95_ms"),
        index_version=row.get("index_version"),
        hit_rates=tuple(zip(row["cutoffs"], row["hit_rates"])),
        verdict=row.get("verdict"),
        baseline_run_id=row.get("baseline_run_id"),
        top1_delta=row.get("top1_delta"),
        top3_delta=row.get("top3_delta"),
        set_fingerprint=row.get("set_fingerprint"),
        hit_rate_intervals=stored_intervals(row),
        metrics=tuple(zip(row.get("metric_names") or (), row.get("metric_values") or ())),
        latency_mode=row.get("latency_mode") or PER_QUESTION,
        latency_batch_mean_ms=row.get("latency_batch_mean_ms"),
    )


def stored_intervals(row: dict) -> tuple[tuple[int, float, float], ...]:
    """(cut-off, low, high) from a summary row; empty for a run stored before intervals were."""
    return tuple(zip(row["cutoffs"], row.get("hit_rate_ci_low") or (), row.get("hit_rate_ci_high") or ()))


def run_history(
    store: ResultStore, key: HistoryKey, limit: int | None = None, policy: BaselinePolicy = BaselinePolicy.PREVIOUS
) -> list[HistoryEntry]:
    """Newest first, at most `limit` readable entries; for older runs, reads the summary of the run before them."""
    stored = store.history(key)
    summaries = {run.run_id: run_summary(run, row) for run, row in islice(store.summaries(stored), limit)}
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
            entry = replace(
                entry, baseline_run_id=summary.baseline_run_id, top1_delta=summary.top1_delta, top3_delta=summary.top3_delta
            )
        elif run.complete:
            entry = _against_previous(store, entry, complete[position[run.run_id] + 1 :], summaries)
        entries.append(entry)
    return entries


def _against_previous(store: ResultStore, entry: HistoryEntry, older_complete: list[StoredRun], read: dict) -> HistoryEntry:
    """A run stored before its check's findings were recorded was checked against the previous complete
    run, the only rule there was; its deltas are recomputed from the two summaries."""
    for previous in older_complete:
        if previous.run_id not in read:
            found = next(store.summaries([previous]), None)
            if found is None:  # unreadable: reported by the store, and no run's baseline
                continue
            read[previous.run_id] = run_summary(*found)
        baseline = read[previous.run_id]
        return replace(
            entry,
            baseline_run_id=baseline.run_id,
            top1_delta=entry.summary.top1_hit_rate - baseline.top1_hit_rate,
            top3_delta=entry.summary.top3_hit_rate - baseline.top3_hit_rate,
        )
    return entry
