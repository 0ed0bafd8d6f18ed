"""The latest rates of every set and retriever side by side, read from the result store.

Each (set, retriever) pair is represented by its latest COMPLETE run: that run is the pair's baseline,
so the leaderboard shows the figures the next regression check will compare with. When the latest run
of a pair is incomplete (the retriever failed on some questions) the entry says so, because the rates
shown are then older than the last attempt. Pure: no Dagster, no printing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from retrieval_pipeline.core.base.arrow_arrays import from_rows
from retrieval_pipeline.core.base.formatting import percent
from retrieval_pipeline.core.scoring.results import GRADER
from retrieval_pipeline.core.services.history import stored_intervals
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore


@dataclass(frozen=True)
class LeaderboardEntry:
    set_identifier: str
    retriever_identifier: str
    run_id: str
    run_at: datetime
    question_count: int
    top1_hit_rate: float
    top3_hit_rate: float
    hit_rates: tuple[tuple[int, float], ...]
    """(cut-off, hit rate) for every cut-off the run was scored at, top-1 and top-3 included."""
    latency_p95_ms: float | None
    index_version: str | None
    latest_run_complete: bool
    """False when a newer run than this one exists but is incomplete."""
    intervals: tuple[tuple[int, float, float], ...] = ()
    """(cut-off, low, high) 95% intervals of the hit rates; empty for runs stored without them."""

    def interval(self, k: int) -> tuple[float, float] | None:
        return next(((low, high) for cutoff, low, high in self.intervals if cutoff == k), None)

    metrics: tuple[tuple[str, float], ...] = ()
    """Ranking metrics (`mrr@D`, `ndcg@D`, `recall@k`); none for runs stored before they existed."""
    latency_batch_mean_ms: float | None = None
    """Set instead of the p95 when the run's questions were timed in batches (no percentile exists)."""

    @property
    def latency_text(self) -> str:
        """The latency figure under the name of what was measured."""
        if self.latency_p95_ms is not None:
            return f"p95 {self.latency_p95_ms:.2f}"
        return "" if self.latency_batch_mean_ms is None else f"batch mean {self.latency_batch_mean_ms:.2f}"

    def metric(self, name: str) -> float | None:
        return dict(self.metrics).get(name)


@dataclass(frozen=True)
class Leaderboard:
    entries: tuple[LeaderboardEntry, ...]
    """Grouped by set (first-seen order of the requested sets), best first inside a set."""
    missing: tuple[tuple[str, str], ...] = ()
    """Requested (set, retriever) pairs without any complete run yet."""

    @property
    def set_identifiers(self) -> list[str]:
        return list(dict.fromkeys(entry.set_identifier for entry in self.entries))

    @property
    def retriever_identifiers(self) -> list[str]:
        return list(dict.fromkeys(entry.retriever_identifier for entry in self.entries))

    def for_set(self, set_identifier: str) -> list[LeaderboardEntry]:
        return [entry for entry in self.entries if entry.set_identifier == set_identifier]

    def entry(self, set_identifier: str, retriever_identifier: str) -> LeaderboardEntry | None:
        return next(
            (e for e in self.entries if (e.set_identifier, e.retriever_identifier) == (set_identifier, retriever_identifier)),
            None,
        )

    def deeper_cutoffs(self, set_identifier: str) -> list[int]:
        """Cut-offs beyond top-1 and top-3 that some run of the set was scored at (columns to show)."""
        return sorted({k for e in self.for_set(set_identifier) for k, _ in e.hit_rates if k not in (1, 3)})

    def metric_names(self, set_identifier: str) -> list[str]:
        """The headline ranking metrics some run of the set has, MRR and nDCG at the deepest cut-off (Recall@k
        stays in the stored summary: beside the top-k hit rates it would mostly repeat them)."""
        names = [name for e in self.for_set(set_identifier) for name, _ in e.metrics]
        return list(dict.fromkeys(name for name in names if name.startswith(("mrr@", "ndcg@"))))

    def to_markdown(self) -> str:
        """One ranked table per set, then (with several sets) a retriever-by-set matrix of top-1 / top-3."""
        if not self.entries:
            return "No complete evaluation run yet."
        blocks = []
        for set_identifier in self.set_identifiers:
            entries = self.for_set(set_identifier)
            deeper = self.deeper_cutoffs(set_identifier)
            metrics = self.metric_names(set_identifier)
            header = [
                "#",
                "retriever",
                "top-1",
                "top-3",
                *[f"top-{k}" for k in deeper],
                *metrics,
                "latency ms",
                "questions",
                "run",
            ]
            rows = []
            for rank, entry in enumerate(entries, start=1):
                rates = dict(entry.hit_rates)
                note = "" if entry.latest_run_complete else " (latest run incomplete)"
                rows.append(
                    [
                        str(rank),
                        f"`{entry.retriever_identifier}`",
                        percent(entry.top1_hit_rate),
                        percent(entry.top3_hit_rate),
                        *[percent(rates[k]) if k in rates else "" for k in deeper],
                        *["" if entry.metric(name) is None else f"{entry.metric(name):.3f}" for name in metrics],
                        entry.latency_text,
                        str(entry.question_count),
                        f"{entry.run_at:%Y-%m-%d %H:%M} UTC{note}",
                    ]
                )
            blocks.append(f"### `{set_identifier}`\n\n" + _table(header, rows))
        if len(self.set_identifiers) > 1:
            header = ["retriever", *[f"`{s}` top-1 / top-3" for s in self.set_identifiers]]
            rows = []
            for retriever in self.retriever_identifiers:
                cells = []
                for set_identifier in self.set_identifiers:
                    entry = self.entry(set_identifier, retriever)
                    cells.append(f"{percent(entry.top1_hit_rate)} / {percent(entry.top3_hit_rate)}" if entry else "")
                rows.append([f"`{retriever}`", *cells])
            blocks.append("### Side by side\n\n" + _table(header, rows))
        if self.missing:
            blocks.append("Not evaluated yet: " + ", ".join(f"`{s}` x `{r}`" for s, r in self.missing))
        return "\n\n".join(blocks)

    def to_table(self):
        """One row per evaluated pair, ranked inside its set as in `to_markdown`, as a pyarrow.Table for
        dataframe users; a hit-rate column per cut-off any run was scored at (null where a run was not), a
        column per ranking metric (`mrr@10`, ...; null for runs stored before them), and the latency under
        the name of what was measured (p95, or the batch mean for runs timed in batches)."""
        import pyarrow as pa

        cutoffs = sorted({1, 3} | {k for entry in self.entries for k, _ in entry.hit_rates})
        metrics = list(dict.fromkeys(name for entry in self.entries for name, _ in entry.metrics))
        schema = pa.schema(
            [
                ("set_identifier", pa.string()),
                ("rank", pa.int64()),
                ("retriever_identifier", pa.string()),
                *[(f"top{k}_hit_rate", pa.float64()) for k in cutoffs],
                *[(name, pa.float64()) for name in metrics],
                ("latency_p95_ms", pa.float64()),
                ("latency_batch_mean_ms", pa.float64()),
                ("question_count", pa.int64()),
                ("run_id", pa.string()),
                ("run_at", pa.timestamp("us", tz="UTC")),
                ("index_version", pa.string()),
                ("latest_run_complete", pa.bool_()),
            ]
        )
        rows = [
            {
                "set_identifier": entry.set_identifier,
                "rank": rank,
                "retriever_identifier": entry.retriever_identifier,
                **{f"top{k}_hit_rate": dict(entry.hit_rates).get(k) for k in cutoffs},
                **{name: entry.metric(name) for name in metrics},
                "latency_p95_ms": entry.latency_p95_ms,
                "latency_batch_mean_ms": entry.latency_batch_mean_ms,
                "question_count": entry.question_count,
                "run_id": entry.run_id,
                "run_at": entry.run_at,
                "index_version": entry.index_version,
                "latest_run_complete": entry.latest_run_complete,
            }
            for set_identifier in self.set_identifiers
            for rank, entry in enumerate(self.for_set(set_identifier), start=1)
        ]
        return from_rows(rows, schema)


def build_leaderboard(
    store: ResultStore,
    set_identifiers: Sequence[str] | None = None,
    retriever_identifiers: Sequence[str] | None = None,
    grader: str = GRADER,
) -> Leaderboard:
    """Every pair of the given sets and retrievers (default: every pair the store holds)."""
    stored_keys = [key for key in store.keys() if key.grader == grader]
    sets = list(set_identifiers) if set_identifiers is not None else _unique(k.set_identifier for k in stored_keys)
    retrievers = (
        list(retriever_identifiers) if retriever_identifiers is not None else _unique(k.retriever_identifier for k in stored_keys)
    )
    entries, missing = [], []
    for set_identifier in sets:
        found = []
        for retriever_identifier in retrievers:
            entry = latest_entry(store, HistoryKey(set_identifier, retriever_identifier, grader))
            if entry is None:
                missing.append((set_identifier, retriever_identifier))
            else:
                found.append(entry)
        found.sort(key=lambda e: (-e.top1_hit_rate, -e.top3_hit_rate, e.retriever_identifier))
        entries.extend(found)
    return Leaderboard(entries=tuple(entries), missing=tuple(missing))


def latest_entry(store: ResultStore, key: HistoryKey) -> LeaderboardEntry | None:
    history = store.history(key)
    latest_complete, row = next(store.summaries(run for run in history if run.complete), (None, None))
    if latest_complete is None:
        return None
    return LeaderboardEntry(
        set_identifier=key.set_identifier,
        retriever_identifier=key.retriever_identifier,
        run_id=row["run_id"],
        run_at=row["run_at"],
        question_count=row["question_count"],
        top1_hit_rate=row["top1_hit_rate"],
        top3_hit_rate=row["top3_hit_rate"],
        hit_rates=tuple(zip(row["cutoffs"], row["hit_rates"])),
        latency_p95_ms=row["latency_p95_ms"],
        index_version=row["index_version"],
        latest_run_complete=history[0].complete,
        intervals=stored_intervals(row),
        metrics=tuple(zip(row.get("metric_names") or (), row.get("metric_values") or ())),
        latency_batch_mean_ms=row.get("latency_batch_mean_ms"),
    )


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
