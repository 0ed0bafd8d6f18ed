"""One stored run's figures, keyed by measure: what the history, the leaderboard and the charts show.

Read from the run's one-row summary file only (never the per-question file), so listing a long history
stays cheap. The row arrives upgraded to the current schema (`run_tables.upgraded`), so nothing here
knows which columns older versions lacked: a figure a run did not record is simply absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from retrieval_pipeline.core.retrieval.latency import PERCENTILES
from retrieval_pipeline.core.scoring.measures import HIT_RATE, TESTED, Figure, figure_of, in_declared_order
from retrieval_pipeline.core.scoring.results import GroupRates
from retrieval_pipeline.core.scoring.slices import TURN_DEPTH
from retrieval_pipeline.core.scoring.turns import ConversationsHit, TurnFigures
from retrieval_pipeline.core.storage.run_schema import CONVERSATION_COLUMNS
from retrieval_pipeline.core.storage.store import HistoryKey


@dataclass(frozen=True)
class RunSummary:
    key: HistoryKey
    run_id: str
    run_at: datetime
    complete: bool
    question_count: int
    errored_count: int
    cutoffs: tuple[int, ...]
    figures: Mapping[str, float]
    """Every figure the run recorded by its measure key: `top1`, `top3`, ..., `mrr@10`, `ndcg@10`, `recall@k`."""
    intervals: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    """The 95% Wilson interval of each hit rate, by key (`top1`, ...)."""
    hit_counts: Mapping[int, int] = field(default_factory=dict)
    """Hits by cut-off, as stored (top-1 and top-3): the exact counts a drop is judged by."""
    latency: Mapping[str, float] = field(default_factory=dict)
    """What was measured, under names that say so: `p50`, `p95`, ..., `max`, or `batch_mean` alone."""
    latency_mode: str = "per_question"
    index_version: str | None = None
    set_fingerprint: str | None = None
    verdict: str | None = None
    """What the run's check found; None for a run saved without a check."""
    verdict_summary: str | None = None
    """The check's own sentence; None for a run saved without a check or before the sentence was stored."""
    baseline_run_id: str | None = None
    deltas: Mapping[str, float] = field(default_factory=dict)
    """The check's changes by key (`top1`, `top3`), on the questions it compared; empty when not compared."""
    rescored_baseline: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    """(rescored, as stored) baseline figure by key (`top1`, `top3`) when the check rescored its baseline
    under the run's labels: `deltas` were computed from the rescored one. Empty otherwise."""
    schema_version: int = 0
    traffic_log: str | None = None
    """The query log the weighted figures were weighted by; None for a run saved without one."""
    traffic_fingerprint: str | None = None
    weighted: Mapping[str, float] = field(default_factory=dict)
    """Every traffic-weighted figure by key, as `figures`; empty without a traffic log."""
    weighted_intervals: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    labels: str = "human"
    """The labels the run was scored under (machine_labels.py)."""
    turns: TurnFigures | None = None
    """A run of conversations: its rates by turn depth and its conversations all hit; None without turns."""
    query_mode: str = "current"
    """How its retriever asked the turns (query_modes.py: `current`, `rewrite`, ...), as the run recorded it."""
    retriever_setup: str | None = None
    """Its retriever's kind and parameters, fingerprinted with its mode aside (RunResult.retriever_setup)."""

    def figure(self, key: str) -> float | None:
        return self.figures.get(key)

    def recorded(self, *, headline: bool | None = None, charted: bool | None = None) -> list[Figure]:
        """The figures the run recorded that a declared measure names (selected like `measures.figures`),
        in declaration order."""
        found = [figure_of(key) for key in self.figures]
        return in_declared_order(
            figure
            for figure in found
            if figure is not None
            and (headline is None or figure.measure.headline_at(figure.k, self.cutoffs) == headline)
            and (charted is None or figure.measure.charted == charted)
        )

    def hit_rate(self, k: int) -> float | None:
        return self.figures.get(HIT_RATE.key(k))

    def hit_count(self, k: int) -> int:
        """Stored for top-1 and top-3; deeper ones are exact too, the rates being hits over questions."""
        return self.hit_counts[k] if k in self.hit_counts else round(self.figures[HIT_RATE.key(k)] * self.question_count)

    @property
    def latency_text(self) -> str:
        """The latency figure under the name of what was measured."""
        if "p95" in self.latency:
            return f"p95 {self.latency['p95']:.2f}"
        return f"batch mean {self.latency['batch_mean']:.2f}" if "batch_mean" in self.latency else ""

    @classmethod
    def of(cls, key: HistoryKey, row: Mapping) -> RunSummary:
        """From an upgraded summary row (see `run_tables.upgraded`)."""
        cutoffs = tuple(row["cutoffs"])
        rates = {HIT_RATE.key(k): rate for k, rate in zip(cutoffs, row["hit_rates"])}
        latency = {f"p{p}": row[f"latency_p{p}_ms"] for p in PERCENTILES} | {"max": row["latency_max_ms"]}
        latency["batch_mean"] = row["latency_batch_mean_ms"]
        deltas = {figure.key: row[f"{figure.key}_delta"] for figure in TESTED}
        return cls(
            key=key,
            run_id=row["run_id"],
            run_at=row["run_at"],
            complete=bool(row["complete"]),
            question_count=row["question_count"],
            errored_count=row["errored_count"],
            cutoffs=cutoffs,
            figures=rates | dict(zip(row["metric_names"], row["metric_values"])),
            intervals={
                HIT_RATE.key(k): (low, high) for k, low, high in zip(cutoffs, row["hit_rate_ci_low"], row["hit_rate_ci_high"])
            },
            hit_counts={figure.k: row[f"{figure.key}_hit_count"] for figure in TESTED},
            latency={name: value for name, value in latency.items() if value is not None},
            latency_mode=row["latency_mode"],
            index_version=row["index_version"],
            set_fingerprint=row["set_fingerprint"],
            verdict=row["verdict"],
            verdict_summary=row["verdict_summary"],
            baseline_run_id=row["baseline_run_id"],
            labels=row["labels"],
            deltas={name: value for name, value in deltas.items() if value is not None},
            rescored_baseline={
                figure.key: (row[f"{figure.key}_baseline_rescored"], row[f"{figure.key}_baseline_stored"])
                for figure in TESTED
                if row[f"{figure.key}_baseline_rescored"] is not None
            },
            schema_version=row["schema_version"],
            traffic_log=row["traffic_log"],
            traffic_fingerprint=row["traffic_fingerprint"],
            weighted=dict(zip(row["weighted_names"] or (), row["weighted_values"] or ())),
            weighted_intervals={
                HIT_RATE.key(k): (low, high)
                for k, low, high in zip(cutoffs, row["weighted_ci_low"] or (), row["weighted_ci_high"] or ())
            },
            turns=_turns(row),
            query_mode=row["query_mode"],
            retriever_setup=row["retriever_setup"],
        )


def _turns(row: Mapping) -> TurnFigures | None:
    """The rates by depth are stored as rates over counts of turns, so the counts come back exactly."""
    if not row[f"by_{TURN_DEPTH.name}"]:
        return None
    by_depth = {
        group["key"]: GroupRates(
            group["questions"], tuple((figure.k, round(group[figure.column] * group["questions"])) for figure in TESTED)
        )
        for group in row[f"by_{TURN_DEPTH.name}"]
    }
    conversations, all_hit = (row[name] for name in CONVERSATION_COLUMNS)
    return TurnFigures(by_depth, ConversationsHit(conversations, all_hit) if conversations is not None else None)
