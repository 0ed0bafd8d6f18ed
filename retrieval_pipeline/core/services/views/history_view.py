"""A pair's stored runs, and the runs a prune removes, as views: the rows `history` and `prune` show,
and the documents their `--json` prints (every key pinned: scripts read them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from retrieval_pipeline.core.base.formatting import signed_pp
from retrieval_pipeline.core.golden.machine_labels import HUMAN
from retrieval_pipeline.core.scoring.measures import TESTED, Figure
from retrieval_pipeline.core.scoring.set_versions import by_reason
from retrieval_pipeline.core.scoring.turns import TurnFigures
from retrieval_pipeline.core.services.evaluation.history import HistoryEntry
from retrieval_pipeline.core.services.views.documents import not_rescored_questions
from retrieval_pipeline.core.services.views.turns_view import conversations_document
from retrieval_pipeline.core.storage.run_summary import RunSummary
from retrieval_pipeline.core.storage.store import HistoryKey, StoredRun

RESCORED_MARK = "*"
"""Beside a delta its check took against the baseline rescored under the run's labels; explained under the table."""


@dataclass(frozen=True)
class HistoryView:
    key: HistoryKey
    store_uri: str
    entries: tuple[HistoryEntry, ...]
    """Newest first."""
    rescored: bool
    """Every run read under the set's current labels, rescored from its stored ids."""

    @property
    def rates(self) -> tuple[Figure, ...]:
        """The figures each row shows with its change: the methodology's tested rates, top-1 first."""
        return TESTED

    @property
    def weighted(self) -> bool:
        """Any run in the table was traffic-weighted: the table then shows the weighted rates beside the plain."""
        return any(entry.summary.weighted for entry in self.entries)

    def weighted_text(self, entry: HistoryEntry, figure: Figure) -> str:
        """A run's stored traffic-weighted rate; `—` for a run saved without a log (as a missing change reads)."""
        value = entry.summary.weighted.get(figure.key)
        return "—" if value is None else figure.text(value)

    @property
    def question_count(self) -> int:
        """The newest run's: a row with another count says so."""
        return self.entries[0].summary.question_count

    def notes(self, entry: HistoryEntry) -> str:
        """The status cell: the check's verdict and acceptance, or why the run is incomplete, and what
        sets the run apart (first run, another question count, rescored)."""
        s = entry.summary
        notes = [entry.status] if s.complete else [_incomplete_note(s.errored_count)]
        if s.complete and s.verdict is None and entry.baseline_run_id is None:
            notes.append("first run")
        if s.question_count != self.question_count:
            notes.append(f"{s.question_count} questions")
        if entry.rescored:
            notes.append(f"{len(entry.rescored)} relabelled rescored")
        if entry.not_rescored:
            notes.append(f"not rescored: {entry.not_rescored}")
        if s.labels != HUMAN:
            notes.append(f"labels {s.labels}")
        if s.query_mode != self.entries[0].summary.query_mode:  # its retriever's `conversation:` changed since
            notes.append(f"turns asked as {s.query_mode}")
        if s.traffic_log is not None:
            notes.append(f"traffic-weighted by log '{s.traffic_log}'")
        return "; ".join(note for note in notes if note)

    def delta_text(self, entry: HistoryEntry, figure: Figure) -> str:
        """ "+0.0 pp"; marked "+0.0 pp*" when the run's check took it against its baseline rescored under
        the run's labels (`rescored_baseline_line` says from which figure)."""
        delta = entry.deltas.get(figure.key)
        return signed_pp(delta) + (RESCORED_MARK if self._rescored_baseline(entry, figure) is not None else "")

    def rescored_baseline_line(self, entry: HistoryEntry) -> str | None:
        """The line under the table for a run whose deltas were taken against its baseline rescored under
        its labels: the baseline figures they were computed from, and as stored (the baseline's own row
        shows those); None for any other run."""
        pairs = [(figure, self._rescored_baseline(entry, figure)) for figure in self.rates]
        shown = [f"{f.title} {f.text(pair[0])} ({f.text(pair[1])} as stored)" for f, pair in pairs if pair is not None]
        if not shown:
            return None
        return f"{RESCORED_MARK} {entry.summary.run_id}: Δ against its baseline rescored under its labels: {', '.join(shown)}."

    def _rescored_baseline(self, entry: HistoryEntry, figure: Figure) -> tuple[float, float] | None:
        """(rescored, as stored) baseline figure behind the entry's delta, when its check rescored the
        baseline; None otherwise (and for a history read under the current labels: its deltas are recomputed)."""
        if self.rescored or entry.deltas.get(figure.key) is None:
            return None
        return entry.summary.rescored_baseline.get(figure.key)

    def left_out_line(self, entry: HistoryEntry) -> str | None:
        """The line under the table for a rescored run that left questions out of its figures (reworded
        since it ran), each named with why, as a check's verdict names them; None when it left none out."""
        if not entry.not_rescored_questions:
            return None
        return f"{entry.summary.run_id}: not rescored, left out of its figures: {by_reason(entry.not_rescored_questions)}."

    def to_dict(self) -> dict[str, Any]:
        """The `retrieval-eval history --json` document."""
        return {
            "set": self.key.set_identifier,
            "retriever": self.key.retriever_identifier,
            "grader": self.key.grader,
            "store": self.store_uri,
            "labels": "current" if self.rescored else "stored",
            "runs": [self._entry(entry) for entry in self.entries],
        }

    def _entry(self, e: HistoryEntry) -> dict[str, Any]:
        s = e.summary
        return {
            "run_id": s.run_id,
            "run_at": s.run_at.isoformat(),
            "complete": s.complete,
            "question_count": s.question_count,
            "errored_count": s.errored_count,
            **{
                name: value
                for figure in self.rates
                for name, value in (
                    (f"{figure.key}_hit_count", s.hit_count(figure.k)),
                    (f"{figure.key}_hit_rate", s.hit_rate(figure.k)),
                )
            },
            "latency_mode": s.latency_mode,
            "latency_p95_ms": s.latency.get("p95"),
            "latency_batch_mean_ms": s.latency.get("batch_mean"),
            "index_version": s.index_version,
            "scored_under": s.labels,
            "baseline_run_id": e.baseline_run_id,
            **{f"{figure.key}_delta": e.deltas.get(figure.key) for figure in self.rates},
            **{
                f"{figure.key}_baseline_{state}": value
                for figure in self.rates
                for state, value in zip(("rescored", "stored"), self._rescored_baseline(e, figure) or (None, None))
            },
            "verdict": s.verdict,
            "status": e.status,
            "accepted": e.accepted,
            "accepted_by": e.acceptance.accepted_by if e.acceptance else None,
            "accepted_at": e.acceptance.accepted_at.isoformat() if e.acceptance else None,
            "is_baseline": e.is_baseline,
            "rescored_questions": None if e.rescored is None else list(e.rescored),
            "not_rescored": e.not_rescored,
            **({"not_rescored_questions": not_rescored_questions(e.not_rescored_questions)} if self.rescored else {}),
            **({"traffic": _stored_traffic(s)} if s.traffic_log is not None else {}),
            **(_stored_turns(s.turns) if s.turns is not None else {}),
        }


def _stored_traffic(summary: RunSummary) -> dict[str, Any]:
    """A weighted run's traffic-weighted figures as stored with it (verdicts.md: traffic-weighted figures)."""
    return {
        "log": summary.traffic_log,
        "fingerprint": summary.traffic_fingerprint,
        "figures": dict(summary.weighted),
        "intervals": {key: list(interval) for key, interval in summary.weighted_intervals.items()},
    }


def _stored_turns(turns: TurnFigures) -> dict[str, Any]:
    """A run of conversations: its rates by turn depth and its conversations all hit, as stored with it."""
    return {
        "by_turn_depth": {depth: rates.as_dict() for depth, rates in turns.by_depth.items()},
        **conversations_document(turns.all_hit),
    }


def _incomplete_note(errors: int) -> str:
    """A run without errors is incomplete only when an interrupted `nightly` saved it unrecorded by Dagster."""
    if errors == 0:
        return "incomplete: interrupted before Dagster recorded it"
    return f"incomplete: {errors} error{'s' if errors != 1 else ''}"


@dataclass(frozen=True)
class PruneView:
    store_uri: str
    older_than_days: float
    dry_run: bool
    runs: tuple[StoredRun, ...]
    leftovers: tuple[str, ...]
    """Files of crashed saves, as a user opens them."""

    @property
    def verb(self) -> str:
        return "Would remove" if self.dry_run else "Removed"

    def to_dict(self) -> dict[str, Any]:
        """The `retrieval-eval prune --json` document."""
        return {
            "store": self.store_uri,
            "older_than_days": self.older_than_days,
            "dry_run": self.dry_run,
            "removed": _stored_runs(self.runs),
            "removed_leftovers": list(self.leftovers),
        }


def _stored_runs(runs: Sequence[StoredRun]) -> list[dict[str, Any]]:
    return [
        {
            "set": run.key.set_identifier,
            "retriever": run.key.retriever_identifier,
            "grader": run.key.grader,
            "run_id": run.run_id,
            "run_at": run.run_at.isoformat(),
            "complete": run.complete,
        }
        for run in runs
    ]
