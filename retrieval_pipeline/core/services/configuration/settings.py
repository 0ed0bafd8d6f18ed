"""What an evaluation is run and judged with, read from the configuration once and handed over whole.

Built in one place, so every caller (`run`, `compare --save`, the Dagster evaluation asset) evaluates by
the same rules; a caller adds only what it alone knows: the command line's tolerance options, a pinned
baseline. The retry policy it holds is defined here, beside the settings it is one of.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from retrieval_pipeline.core.golden.machine_labels import check_labels
from retrieval_pipeline.core.retrieval.query_modes import QueryPlan
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.scoring import CutOffs
from retrieval_pipeline.core.scoring.traffic import TrafficWeights
from retrieval_pipeline.core.services.configuration.schema import BaselinePolicy

if TYPE_CHECKING:
    from retrieval_pipeline.core.services.configuration.project import ProjectConfig


@dataclass(frozen=True)
class RetryPolicy:
    """A failing question is asked `attempts` times in all, waiting backoff, backoff*factor, ... between."""

    attempts: int = 3
    backoff_seconds: float = 0.2
    factor: float = 2.0

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.backoff_seconds < 0 or self.factor < 1:
            raise ValueError("retries need attempts >= 1, backoff >= 0 and factor >= 1")


@dataclass(frozen=True)
class EvaluationSettings:
    """Its defaults are those of an empty configuration file, so a test or a script states only what it changes.

    `tolerances_source` (the configuration file) is named if the tolerances are refused. The baseline is
    the run `baseline_run_id` pins, else the one `baseline_policy` picks. With `unstable_window`,
    questions that flipped at least twice in that many past complete runs are left out of the comparison
    (never out of the rates); None keeps them in.

    The retry policy is the runner's default for every caller: the configuration has no retry key, and
    the HTTP kind retries inside its adapter (its own `retries` and `backoff_seconds`), raising faults
    the runner does not ask again.
    """

    tolerances: Tolerances = Tolerances()
    tolerances_source: str | None = None
    cutoffs: CutOffs = CutOffs()
    retry: RetryPolicy = RetryPolicy()
    baseline_policy: BaselinePolicy = BaselinePolicy.PREVIOUS
    baseline_run_id: str | None = None
    unstable_window: int | None = None
    labels: str = "human"
    """Which labels score the run (machine_labels.py): the configuration's `labels`, or `--labels`."""
    traffic: TrafficWeights | None = None
    """The traffic a query log assigned to the set's questions: the run gets weighted figures beside the
    plain ones (and is gated on them with `tolerances.weighted`); None: plain figures only."""
    query_plans: Mapping[str, QueryPlan] = field(default_factory=dict)
    """How each configured retriever asks a conversation's turns (its `conversation:` key, query_modes.py);
    a retriever not named here asks every question as typed."""

    def query_plan(self, retriever: str) -> QueryPlan:
        return self.query_plans.get(retriever, QueryPlan())

    @classmethod
    def from_config(
        cls,
        config: ProjectConfig,
        *,
        max_top1_drop: float | None = None,
        max_top3_drop: float | None = None,
        baseline_run_id: str | None = None,
        labels: str | None = None,
    ) -> EvaluationSettings:
        """An override of None leaves the configuration's value. One that makes the tolerances invalid is
        refused here, before any store is opened or question asked."""
        overrides = {"max_top1_drop": max_top1_drop, "max_top3_drop": max_top3_drop}
        return cls(
            tolerances=config.tolerances.replaced(**{name: value for name, value in overrides.items() if value is not None}),
            tolerances_source=config.source,
            cutoffs=config.cutoffs,
            baseline_policy=config.baseline_policy,
            baseline_run_id=baseline_run_id,
            unstable_window=config.audit.unstable_window if config.audit.exclude_unstable else None,
            labels=check_labels(labels or config.labels),
            query_plans={identifier: config.query_plan(identifier) for identifier in config.retriever_identifiers},
        )
