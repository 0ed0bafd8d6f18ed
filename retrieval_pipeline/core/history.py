"""A key's stored runs as summaries, newest first, each with its deltas to the run it was compared with.

Only the one-row summary files are read, never the per-question files, so listing a long history
stays cheap. The delta of a complete run is taken against the previous complete run, which is the
baseline its regression check used; an incomplete run is never compared (its errored questions are
not misses), so it has no delta and is skipped as anyone's baseline.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from retrieval_pipeline.core.latency import PER_QUESTION
from retrieval_pipeline.core.store import HistoryKey, ResultStore, StoredRun


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
    latency_mode: str = PER_QUESTION
    latency_batch_mean_ms: float | None = None


@dataclass(frozen=True)
class HistoryEntry:
    summary: RunSummary
    baseline_run_id: str | None = None
    top1_delta: float | None = None
    top3_delta: float | None = None


def read_summary(store: ResultStore, stored: StoredRun) -> RunSummary:
    row = store.read_summary(stored)
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
        latency_mode=row.get("latency_mode") or PER_QUESTION,
        latency_batch_mean_ms=row.get("latency_batch_mean_ms"),
    )


def run_history(store: ResultStore, key: HistoryKey, limit: int | None = None) -> list[HistoryEntry]:
    """Newest first, at most `limit` entries; reads one summary beyond them to give the oldest its delta."""
    stored = store.history(key)
    shown = stored if limit is None else stored[:limit]
    summaries = [read_summary(store, run) for run in shown]
    older = None
    if any(summary.complete for summary in summaries):
        beyond = next((run for run in stored[len(shown) :] if run.complete), None)
        older = read_summary(store, beyond) if beyond is not None else None
    return with_deltas(summaries, older)


def with_deltas(newest_first: list[RunSummary], older_baseline: RunSummary | None = None) -> list[HistoryEntry]:
    """Each complete run against the next older complete run (`older_baseline` for the oldest shown)."""
    entries = []
    for index, summary in enumerate(newest_first):
        if not summary.complete:
            entries.append(HistoryEntry(summary))
            continue
        baseline = next((s for s in newest_first[index + 1 :] if s.complete), older_baseline)
        if baseline is None:
            entries.append(HistoryEntry(summary))
        else:
            entries.append(
                HistoryEntry(
                    summary,
                    baseline_run_id=baseline.run_id,
                    top1_delta=summary.top1_hit_rate - baseline.top1_hit_rate,
                    top3_delta=summary.top3_hit_rate - baseline.top3_hit_rate,
                )
            )
    return entries
