"""The latest rates of every set and retriever side by side, read from the result store.

Each (set, retriever) pair is represented by its latest COMPLETE run: that run is the pair's baseline,
so the leaderboard shows the figures the next regression check will compare with. When the latest run
of a pair is incomplete (the retriever failed on some questions) the entry says so, because the rates
shown are then older than the last attempt. Pure: no Dagster, no printing.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from retrieval_pipeline.core.base.arrow_arrays import from_rows
from retrieval_pipeline.core.golden.machine_labels import HUMAN
from retrieval_pipeline.core.scoring.measures import HIT_RATE, TESTED, Figure, in_declared_order
from retrieval_pipeline.core.scoring.results import GRADER
from retrieval_pipeline.core.services.evaluation.leaderboard_turns import TABLE_COLUMNS as TURN_COLUMNS
from retrieval_pipeline.core.services.evaluation.leaderboard_turns import depth_markdown, table_values, turn_entries
from retrieval_pipeline.core.storage.run_summary import RunSummary
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

TOP1 = Figure(HIT_RATE, 1)
"""The default ranking: the methodology's primary figure."""


@dataclass(frozen=True)
class LeaderboardEntry:
    summary: RunSummary
    """The pair's latest complete run."""
    latest_run_complete: bool
    """False when a newer run than this one exists but is incomplete."""

    @property
    def set_identifier(self) -> str:
        return self.summary.key.set_identifier

    @property
    def retriever_identifier(self) -> str:
        return self.summary.key.retriever_identifier

    @property
    def run_id(self) -> str:
        return self.summary.run_id


@dataclass(frozen=True)
class Leaderboard:
    entries: tuple[LeaderboardEntry, ...]
    """Grouped by set (first-seen order of the requested sets), best first inside a set."""
    missing: tuple[tuple[str, str], ...] = ()
    """Requested (set, retriever) pairs without any complete run yet."""
    rank_by: Figure = TOP1
    """The figure entries are ranked by inside a set (ties: top-1, then top-3, then the name)."""

    @property
    def ranking(self) -> str:
        """What every table and chart title says, so nobody has to guess the order: "ranked by top-1"."""
        return f"ranked by {self.rank_by.short}"

    @property
    def set_identifiers(self) -> list[str]:
        return list(dict.fromkeys(entry.set_identifier for entry in self.entries))

    @property
    def retriever_identifiers(self) -> list[str]:
        return list(dict.fromkeys(entry.retriever_identifier for entry in self.entries))

    def for_set(self, set_identifier: str) -> list[LeaderboardEntry]:
        return [entry for entry in self.entries if entry.set_identifier == set_identifier]

    def summaries(self, set_identifier: str) -> list[RunSummary]:
        return [entry.summary for entry in self.for_set(set_identifier)]

    def entry(self, set_identifier: str, retriever_identifier: str) -> LeaderboardEntry | None:
        return next(
            (e for e in self.entries if (e.set_identifier, e.retriever_identifier) == (set_identifier, retriever_identifier)),
            None,
        )

    def figures(self, set_identifier: str) -> list[Figure]:
        """The headline figures some run of the set recorded, as columns: hit rates by cut-off, then the
        ranking measures in declaration order."""
        return recorded_figures(self.for_set(set_identifier), headline=True)

    def compared_figures(self, set_identifier: str) -> list[Figure]:
        """The columns a person compares, narrow enough for a normal window: top-1, top-3, the ranking
        figure and the headline ranking measures (deeper hit rates, counts and run ids stay in `to_table`)."""
        return [
            figure
            for figure in recorded_figures(self.for_set(set_identifier), headline=True, always=[self.rank_by])
            if figure.measure is not HIT_RATE or figure in TESTED or figure == self.rank_by
        ]

    def to_markdown(self) -> str:
        """One ranked table per set, then (with several sets) a retriever-by-set matrix of top-1 / top-3."""
        if not self.entries:
            return "No complete evaluation run yet."
        blocks = []
        for set_identifier in self.set_identifiers:
            shown = self.compared_figures(set_identifier)
            header = ["#", "retriever", *[figure.short for figure in shown], "latency ms"]
            rows = [
                [
                    str(rank),
                    f"`{entry.retriever_identifier}`{_notes(entry)}",
                    *figure_cells(entry.summary, shown),
                    entry.summary.latency_text,
                ]
                for rank, entry in enumerate(self.for_set(set_identifier), start=1)
            ]
            blocks.append(f"### `{set_identifier}`, {self.ranking}\n\n" + _table(header, rows))
            by_depth = depth_markdown(set_identifier, self.summaries(set_identifier))
            if by_depth is not None:
                blocks.append(by_depth)
        if len(self.set_identifiers) > 1:
            header = ["retriever", *[f"`{s}` top-1 / top-3" for s in self.set_identifiers]]
            rows = []
            for retriever in self.retriever_identifiers:
                cells = []
                for set_identifier in self.set_identifiers:
                    entry = self.entry(set_identifier, retriever)
                    cells.append(
                        " / ".join(figure_cells(entry.summary, [Figure(HIT_RATE, 1), Figure(HIT_RATE, 3)])) if entry else ""
                    )
                rows.append([f"`{retriever}`", *cells])
            blocks.append("### Side by side\n\n" + _table(header, rows))
        if self.missing:
            blocks.append("Not evaluated yet: " + ", ".join(f"`{s}` x `{r}`" for s, r in self.missing))
        return "\n\n".join(blocks)

    def to_table(self):
        """One row per evaluated pair, ranked inside its set as in `to_markdown`, as a pyarrow.Table for
        dataframe users: a column per figure any run recorded (null where a run did not; top-1 and top-3
        always), and the latency under the name of what was measured (p95, or the batch mean for runs
        timed in batches); where some run recorded turns, its figures by turn depth (leaderboard_turns.py)."""
        import pyarrow as pa

        shown = recorded_figures(self.entries, always=[Figure(HIT_RATE, 1), Figure(HIT_RATE, 3)])
        turns = {row.summary.run_id: row for s in self.set_identifiers for row in turn_entries(self.summaries(s))}
        turn_columns = TURN_COLUMNS if turns else ()
        schema = pa.schema(
            [
                ("set_identifier", pa.string()),
                ("rank", pa.int64()),
                ("retriever_identifier", pa.string()),
                *[(figure.column, pa.float64()) for figure in shown],
                ("latency_p95_ms", pa.float64()),
                ("latency_batch_mean_ms", pa.float64()),
                ("question_count", pa.int64()),
                ("run_id", pa.string()),
                ("run_at", pa.timestamp("us", tz="UTC")),
                ("index_version", pa.string()),
                ("latest_run_complete", pa.bool_()),
                ("labels", pa.string()),
                *[(name, pa.float64()) for name in turn_columns],
            ]
        )
        rows = [
            {
                "set_identifier": entry.set_identifier,
                "rank": rank,
                "retriever_identifier": entry.retriever_identifier,
                **{figure.column: entry.summary.figure(figure.key) for figure in shown},
                "latency_p95_ms": entry.summary.latency.get("p95"),
                "latency_batch_mean_ms": entry.summary.latency.get("batch_mean"),
                "question_count": entry.summary.question_count,
                "run_id": entry.run_id,
                "run_at": entry.summary.run_at,
                "index_version": entry.summary.index_version,
                "latest_run_complete": entry.latest_run_complete,
                "labels": entry.summary.labels,
                **(table_values(turns.get(entry.run_id)) if turns else {}),
            }
            for set_identifier in self.set_identifiers
            for rank, entry in enumerate(self.for_set(set_identifier), start=1)
        ]
        return from_rows(rows, schema)


def recorded_figures(
    entries: Iterable[LeaderboardEntry], *, headline: bool | None = None, always: Iterable[Figure] = ()
) -> list[Figure]:
    """Every figure (of `headline` ones, when given) some entry recorded, plus `always`: hit rates by
    cut-off first, then the ranking measures in declaration order, each in first-seen order."""
    found = {figure.key: figure for figure in always}
    for entry in entries:
        for figure in entry.summary.recorded(headline=headline):
            found.setdefault(figure.key, figure)
    return in_declared_order(found.values())


def figure_cells(summary: RunSummary, shown: Sequence[Figure]) -> list[str]:
    """Each figure as its measure reads it; empty where the run did not record it."""
    return ["" if summary.figure(figure.key) is None else figure.text(summary.figure(figure.key)) for figure in shown]


def build_leaderboard(
    store: ResultStore,
    set_identifiers: Sequence[str] | None = None,
    retriever_identifiers: Sequence[str] | None = None,
    grader: str = GRADER,
    rank_by: Figure = TOP1,
) -> Leaderboard:
    """Every pair of the given sets and retrievers (default: every pair the store holds), best `rank_by`
    first; a run that did not record `rank_by` ranks last."""
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
        found.sort(key=functools.partial(_rank, rank_by))
        entries.extend(found)
    return Leaderboard(entries=tuple(entries), missing=tuple(missing), rank_by=rank_by)


def _rank(rank_by: Figure, entry: LeaderboardEntry) -> tuple:
    value = entry.summary.figure(rank_by.key)
    summary = entry.summary
    return (value is None, -(value or 0.0), *(-summary.hit_rate(figure.k) for figure in TESTED), entry.retriever_identifier)


def latest_entry(store: ResultStore, key: HistoryKey) -> LeaderboardEntry | None:
    history = store.history(key)
    latest_complete, row = next(store.summaries(run for run in history if run.complete), (None, None))
    if latest_complete is None:
        return None
    return LeaderboardEntry(RunSummary.of(key, row), latest_run_complete=history[0].complete)


def _notes(entry: LeaderboardEntry) -> str:
    """What sets a row apart from a complete run scored under human labels, which most rows are."""
    incomplete = "" if entry.latest_run_complete else " (latest run incomplete)"
    labels = "" if entry.summary.labels == HUMAN else f" (labels {entry.summary.labels})"
    return incomplete + labels


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
