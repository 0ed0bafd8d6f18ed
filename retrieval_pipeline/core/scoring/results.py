"""A run's result (SPEC section 4): per-question outcomes and everything derived from them."""

from __future__ import annotations

from bisect import bisect_right
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from datetime import datetime, timezone

from retrieval_pipeline.core.retrieval import latency
from retrieval_pipeline.core.golden.fingerprints import set_fingerprint
from retrieval_pipeline.core.scoring.intervals import wilson_interval
from retrieval_pipeline.core.scoring.ranking_metrics import mean_metrics, question_metrics
from retrieval_pipeline.core.scoring.scoring import DEFAULT_CUTOFFS, first_hit_rank, hit_rate

GRADER = "retrieval_hit_rate"
RUN_ID_PATTERN = r"^\d{8}T\d{12}Z-[0-9a-f]{8}$"
"""What `new_run_id` makes: the store recognises its own run files by it and refuses any other run id."""


@dataclass(frozen=True)
class QuestionResult:
    """What one question got back. Hits are derived, never stored apart from the ids they come from.

    An errored question (the retriever failed after its retries) has no hits at all: it is neither a
    hit nor a miss, and its run is incomplete.
    """

    question_id: str
    form: str
    hard_class: str | None
    expected_document_ids: tuple[str, ...]
    retrieved_document_ids: tuple[str, ...]
    latency_ms: float
    error: str | None = None
    fingerprint: str | None = None
    """Of the question as asked (see fingerprints.py); None in runs stored before fingerprints existed."""

    @cached_property
    def first_hit_rank(self) -> int | None:
        """Computed once: every count, breakdown and table asks for hits again."""
        return first_hit_rank(self.retrieved_document_ids, self.expected_document_ids)

    def hit_at(self, k: int) -> bool | None:
        if self.error is not None:
            return None
        return self.first_hit_rank is not None and self.first_hit_rank <= k

    @property
    def top1_hit(self) -> bool | None:
        return self.hit_at(1)

    @property
    def top3_hit(self) -> bool | None:
        return self.hit_at(3)


@dataclass(frozen=True)
class GroupRates:
    """One key of a breakdown (a form or a hard class)."""

    questions: int
    top1_hits: int
    top3_hits: int

    @property
    def top1_hit_rate(self) -> float:
        return hit_rate(self.top1_hits, self.questions)

    @property
    def top3_hit_rate(self) -> float:
        return hit_rate(self.top3_hits, self.questions)

    def intervals(self) -> dict[str, tuple[float, float]]:
        return {"top1": wilson_interval(self.top1_hits, self.questions), "top3": wilson_interval(self.top3_hits, self.questions)}

    def as_dict(self) -> dict[str, float | int]:
        return {"questions": self.questions, "top1_hit_rate": self.top1_hit_rate, "top3_hit_rate": self.top3_hit_rate}


@dataclass(frozen=True)
class EvaluationSummary:
    """The generic evaluation-result model (ADR-060): retrieval rates stored under their overloaded names."""

    set_identifier: str
    model: str
    grader: str
    total: int
    passed: int
    pass_rate: float
    mean_score: float
    question_outcomes: tuple[tuple[str, bool, float], ...]


def new_run_id(run_at: datetime) -> str:
    """Sortable by time, unique across processes: the timestamp then random hex."""
    return f"{as_utc(run_at).strftime('%Y%m%dT%H%M%S%fZ')}-{secrets.token_hex(4)}"


def as_utc(moment: datetime) -> datetime:
    """Run ids and the store sort by UTC time; a naive time is taken as UTC."""
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class RunResult:
    set_identifier: str
    retriever_identifier: str
    questions: tuple[QuestionResult, ...]
    run_at: datetime = field(default_factory=utc_now)
    run_id: str = ""
    cutoffs: tuple[int, ...] = DEFAULT_CUTOFFS
    index_version: str | None = None
    grader: str = GRADER
    latency_mode: str = latency.PER_QUESTION
    """What each question's latency_ms is (see latency.py): its own timing, or its batch's mean."""

    def __post_init__(self) -> None:
        latency.check_mode(self.latency_mode)
        object.__setattr__(self, "run_at", as_utc(self.run_at))
        if not self.run_id:
            object.__setattr__(self, "run_id", new_run_id(self.run_at))

    @property
    def question_count(self) -> int:
        return len(self.questions)

    @cached_property
    def set_fingerprint(self) -> str | None:
        """Which version of the set this run measured; None for a run stored before fingerprints."""
        return set_fingerprint((q.question_id, q.fingerprint) for q in self.questions)

    @cached_property
    def _hit_ranks(self) -> list[int]:
        """Sorted once: every rate, table and verdict counts the hits again, at one cut-off or another."""
        return sorted(q.first_hit_rank for q in self.questions if q.error is None and q.first_hit_rank is not None)

    def hit_count(self, k: int) -> int:
        return bisect_right(self._hit_ranks, k)

    def hit_rate(self, k: int) -> float:
        return hit_rate(self.hit_count(k), self.question_count)

    @property
    def top1_hit_count(self) -> int:
        return self.hit_count(1)

    @property
    def top3_hit_count(self) -> int:
        return self.hit_count(3)

    @property
    def top1_hit_rate(self) -> float:
        return self.hit_rate(1)

    @property
    def top3_hit_rate(self) -> float:
        return self.hit_rate(3)

    @cached_property
    def errored_question_ids(self) -> tuple[str, ...]:
        return tuple(q.question_id for q in self.questions if q.error is not None)

    @property
    def complete(self) -> bool:
        """An incomplete run is kept for inspection but never becomes a baseline."""
        return not self.errored_question_ids

    def by_form(self) -> dict[str, GroupRates]:
        return dict(self._by_form)

    def by_hard_class(self) -> dict[str, GroupRates]:
        return dict(self._by_hard_class)

    @cached_property
    def _by_form(self) -> dict[str, GroupRates]:
        """Counted once: the summary, its Parquet row, the metadata and the JSON all ask again."""
        return _breakdown(self.questions, lambda q: q.form)

    @cached_property
    def _by_hard_class(self) -> dict[str, GroupRates]:
        return _breakdown(self.questions, lambda q: q.hard_class)

    def intervals(self) -> dict[str, tuple[float, float]]:
        """The Wilson 95% interval of every hit rate, keyed `top1`, `top3`, ..."""
        return {f"top{k}": wilson_interval(self.hit_count(k), self.question_count) for k in self.cutoffs}

    @cached_property
    def question_metrics(self) -> dict[str, dict[str, float] | None]:
        """Each question's ranking metrics by id (None for an errored question: it has no ranking)."""
        return {
            q.question_id: None if q.error is not None else question_metrics(q.retrieved_document_ids, q.expected_document_ids, self.cutoffs)
            for q in self.questions
        }

    def metrics(self) -> dict[str, float]:
        return mean_metrics(list(self.question_metrics.values()), self.cutoffs)

    def metrics_by_form(self) -> dict[str, dict[str, float]]:
        return self._group_metrics(lambda q: q.form)

    def metrics_by_hard_class(self) -> dict[str, dict[str, float]]:
        return self._group_metrics(lambda q: q.hard_class)

    def _group_metrics(self, key: Callable[[QuestionResult], str | None]) -> dict[str, dict[str, float]]:
        groups: dict[str, list[dict[str, float] | None]] = {}
        for question in self.questions:
            if (group := key(question)) is not None:
                groups.setdefault(group, []).append(self.question_metrics[question.question_id])
        return {group: mean_metrics(scores, self.cutoffs) for group, scores in groups.items()}

    def latency_summary(self) -> dict[str, float]:
        """What was measured, under names that say so: percentiles, or `batch_mean` alone."""
        return latency.summary(self.latency_mode, self._answered_latencies)

    def latency_percentiles(self) -> dict[str, float]:
        return latency.percentiles(self.latency_mode, self._answered_latencies)

    @cached_property
    def _answered_latencies(self) -> tuple[float, ...]:
        return tuple(q.latency_ms for q in self.questions if q.error is None)

    def to_evaluation_summary(self) -> EvaluationSummary:
        return EvaluationSummary(
            set_identifier=self.set_identifier,
            model=self.retriever_identifier,
            grader=self.grader,
            total=self.question_count,
            passed=self.top1_hit_count,
            pass_rate=self.top1_hit_rate,
            mean_score=self.top3_hit_rate,
            question_outcomes=tuple((q.question_id, bool(q.top1_hit), 1.0 if q.top3_hit else 0.0) for q in self.questions),
        )


def _breakdown(questions: Iterable[QuestionResult], key: Callable[[QuestionResult], str | None]) -> dict[str, GroupRates]:
    """Keys in first-seen order, only keys that occur; questions without a key are left out."""
    counts: dict[str, list[int]] = {}
    for question in questions:
        group = key(question)
        if group is None:
            continue
        tally = counts.setdefault(group, [0, 0, 0])
        tally[0] += 1
        tally[1] += bool(question.top1_hit)
        tally[2] += bool(question.top3_hit)
    return {group: GroupRates(*tally) for group, tally in counts.items()}
