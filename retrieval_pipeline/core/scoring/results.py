"""A run's result: its questions as columns and everything derived from them at once."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cached_property

from retrieval_pipeline.core.base.arrow_arrays import numbers
from retrieval_pipeline.core.golden.fingerprints import set_fingerprint
from retrieval_pipeline.core.retrieval import latency
from retrieval_pipeline.core.retrieval.approximation import Approximation
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.question_columns import QuestionColumns
from retrieval_pipeline.core.scoring.question_columns import QuestionResult as QuestionResult  # readers import it from here
from retrieval_pipeline.core.scoring.ranking_metrics import mean_scores
from retrieval_pipeline.core.scoring.scoring import DEFAULT_CUTOFFS, hit_rate
from retrieval_pipeline.core.scoring.slices import FORM, HARD_CLASS, SLICES, TURN_DEPTH, Slice, slice_named
from retrieval_pipeline.core.scoring.stats.intervals import wilson_interval

GRADER = "retrieval_hit_rate"
RUN_ID_PATTERN = r"^\d{8}T\d{12}Z-[0-9a-f]{8}$"
"""What `new_run_id` makes: the store recognises its own run files by it and refuses any other run id."""


@dataclass(frozen=True)
class GroupRates:
    """One key of a breakdown (a form, a hard class, a turn depth): its hits at each tested cut-off (measures.TESTED),
    kept by cut-off so another tested cut-off needs no new field."""

    questions: int
    hit_counts: tuple[tuple[int, int], ...]
    """(cut-off, hits) at each tested cut-off, in increasing order."""

    def hit_count(self, k: int) -> int:
        return dict(self.hit_counts)[k]

    def hit_rate(self, k: int) -> float:
        return hit_rate(self.hit_count(k), self.questions)

    def intervals(self) -> dict[str, tuple[float, float]]:
        return {figure.key: wilson_interval(self.hit_count(figure.k), self.questions) for figure in TESTED}

    def as_dict(self) -> dict[str, float | int]:
        return {"questions": self.questions, **{figure.column: self.hit_rate(figure.k) for figure in TESTED}}


@dataclass(frozen=True)
class EvaluationSummary:
    """The generic evaluation-result model's names, which retrieval rates are also stored under (`pass_rate` =
    the first tested rate, top-1; `mean_score` = the deepest, top-3) so any reader of that model sees retrieval runs as graded runs."""

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
    """One run of a set against a retriever. `questions` may be given as any sequence of QuestionResult
    (a run assembled question by question); it is kept as the run's QuestionColumns."""

    set_identifier: str
    retriever_identifier: str
    questions: QuestionColumns
    run_at: datetime = field(default_factory=utc_now)
    run_id: str = ""
    cutoffs: tuple[int, ...] = DEFAULT_CUTOFFS
    index_version: str | None = None
    grader: str = GRADER
    latency_mode: str = latency.PER_QUESTION
    """What each question's latency_ms is (see latency.py): its own timing, or its batch's mean."""
    labels: str = "human"
    """The labels it was scored under (machine_labels.py): `human`, or `human+machine`."""
    approximation: Approximation | None = None
    """What an approximate search said of itself (approximation.py); None: the search was exact."""
    query_mode: str = "current"
    """How the retriever asked a conversation's turns (query_modes.py): `current`, `history:2`, `rewrite`,
    `rewriter:NAME`...; each question's `query` holds the text it was asked with when not its own."""
    retriever_setup: str | None = None
    """The fingerprint of the retriever's kind and parameters, its query mode aside (query_modes.QueryPlan);
    None for a retriever evaluated without a configuration."""

    def __post_init__(self) -> None:
        latency.check_mode(self.latency_mode)
        if not isinstance(self.questions, QuestionColumns):
            object.__setattr__(self, "questions", QuestionColumns.from_results(self.questions))
        object.__setattr__(self, "run_at", as_utc(self.run_at))
        if not self.run_id:
            object.__setattr__(self, "run_id", new_run_id(self.run_at))

    @property
    def question_count(self) -> int:
        return len(self.questions)

    @cached_property
    def set_fingerprint(self) -> str | None:
        """Which version of the set this run measured; None for a run stored before fingerprints."""
        return set_fingerprint(zip(self.questions.ids, self.questions.values("fingerprint")))

    def hit_count(self, k: int) -> int:
        return int(self.questions.hits(k).sum())

    def hit_rate(self, k: int) -> float:
        return hit_rate(self.hit_count(k), self.question_count)

    @cached_property
    def errored_question_ids(self) -> tuple[str, ...]:
        answered = self.questions.answered
        return tuple(question_id for question_id, ok in zip(self.questions.ids, answered.tolist()) if not ok)

    @property
    def complete(self) -> bool:
        """An incomplete run is kept for inspection but never becomes a baseline."""
        return bool(self.questions.answered.all())

    def by_form(self) -> dict[str, GroupRates]:
        return self.breakdown(FORM.name)

    def by_hard_class(self) -> dict[str, GroupRates]:
        return self.breakdown(HARD_CLASS.name)

    def by_turn_depth(self) -> dict[str, GroupRates]:
        return self.breakdown(TURN_DEPTH.name)

    def breakdown(self, name: str) -> dict[str, GroupRates]:
        """The rates of each key of a declared slice (slices.py); empty when no question has a key."""
        return dict(self._breakdowns[name])

    @cached_property
    def _breakdowns(self) -> dict[str, dict[str, GroupRates]]:
        """Counted once: the summary, its Parquet row, the metadata and the JSON all ask again."""
        return {declared.name: self._breakdown(declared) for declared in SLICES}

    def _breakdown(self, declared: Slice) -> dict[str, GroupRates]:
        """Keys in the slice's order, only keys that occur; questions without a key are left out."""
        import numpy as np

        keys, codes = declared.groups(self.questions)
        labelled = codes >= 0
        cutoffs = [figure.k for figure in TESTED]
        totals, *counts = (
            np.bincount(codes[labelled & hits], minlength=len(keys)).tolist()
            for hits in (labelled, *map(self.questions.hits, cutoffs))
        )
        return {
            key: GroupRates(totals[index], tuple((k, count[index]) for k, count in zip(cutoffs, counts)))
            for index, key in enumerate(keys)
        }

    def intervals(self) -> dict[str, tuple[float, float]]:
        """The Wilson 95% interval of every hit rate, keyed `top1`, `top3`, ..."""
        return {f"top{k}": wilson_interval(self.hit_count(k), self.question_count) for k in self.cutoffs}

    @cached_property
    def question_metrics(self) -> dict[str, dict[str, float] | None]:
        """Each question's ranking metrics by id (None for an errored question: it has no ranking)."""
        columns = {name: values.tolist() for name, values in self.questions.metrics(self.cutoffs).items()}
        return {
            question_id: {name: values[position] for name, values in columns.items()} if answered else None
            for position, (question_id, answered) in enumerate(zip(self.questions.ids, self.questions.answered.tolist()))
        }

    def metrics(self) -> dict[str, float]:
        return mean_scores(self.questions.metrics(self.cutoffs), self.questions.answered, self.question_count)

    def metrics_by_form(self) -> dict[str, dict[str, float]]:
        return self.group_metrics(FORM.name)

    def metrics_by_hard_class(self) -> dict[str, dict[str, float]]:
        return self.group_metrics(HARD_CLASS.name)

    def group_metrics(self, name: str) -> dict[str, dict[str, float]]:
        """Each key of a declared slice: its mean ranking scores."""
        keys, codes = slice_named(name).groups(self.questions)
        scores, answered = self.questions.metrics(self.cutoffs), self.questions.answered
        return {
            key: mean_scores(scores, answered & (codes == index), int((codes == index).sum())) for index, key in enumerate(keys)
        }

    def latency_summary(self) -> dict[str, float]:
        """What was measured, under names that say so: percentiles, or `batch_mean` alone."""
        return latency.summary(self.latency_mode, self._answered_latencies)

    def latency_percentiles(self) -> dict[str, float]:
        return latency.percentiles(self.latency_mode, self._answered_latencies)

    @cached_property
    def _answered_latencies(self) -> list[float]:
        return numbers(self.questions.column("latency_ms"))[self.questions.answered].tolist()

    def to_evaluation_summary(self) -> EvaluationSummary:
        first, deepest = TESTED[0].k, TESTED[-1].k
        return EvaluationSummary(
            set_identifier=self.set_identifier,
            model=self.retriever_identifier,
            grader=self.grader,
            total=self.question_count,
            passed=self.hit_count(first),
            pass_rate=self.hit_rate(first),
            mean_score=self.hit_rate(deepest),
            question_outcomes=tuple(
                zip(self.questions.ids, self.questions.hits(first).tolist(), self.questions.hits(deepest).astype(float).tolist())
            ),
        )
