"""The configuration file's schema: every section and key, its default and the rule that checks it.

Declared apart from `config.ProjectConfig`, which builds sets and retrievers from a checked file, so a key
is added here and documented in docs/configuration.md (a test reads the models to check that).
"""

from __future__ import annotations

import difflib
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationInfo, field_validator, model_validator

from retrieval_pipeline.core.base.errors import quoted
from retrieval_pipeline.core.golden.query_logs import QueryLogSpec
from retrieval_pipeline.core.golden.questions import check_identifier
from retrieval_pipeline.core.retrieval.query_modes import CURRENT, QueryMode, query_mode
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.scoring import DEFAULT_CUTOFFS, OVERFETCH_MULTIPLIER, CutOffs
from retrieval_pipeline.core.storage.retention import check_retention_days

DEFAULT_RETENTION_DAYS = 30.0


class BaselinePolicy(str, Enum):
    """Which stored run a new run is compared with: the latest complete one, or the latest accepted one
    (evaluation/baselines.py)."""

    PREVIOUS = "previous"
    ACCEPTED = "accepted"


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SetFileSource(_Section):
    file: str
    corpus: str | None = None
    traffic: str | None = None
    """The query log whose traffic weighs the set's questions (traffic-weighted figures); None: none."""


class BeirSource(_Section):
    beir: str
    identifier: str
    split: str = "test"
    name: str | None = None
    corpus: str | None = None
    traffic: str | None = None
    min_relevance: float | None = Field(None, allow_inf_nan=False)
    """The lowest grade counted relevant, as `import beir --min-relevance`; None: any grade above 0."""

    @field_validator("identifier")
    @classmethod
    def _identifier(cls, value: str) -> str:
        return check_identifier(value, "set identifier")

    @field_validator("min_relevance", mode="before")
    @classmethod
    def _grade(cls, value: Any) -> Any:
        """Before pydantic's coercion, which would read `true` as the grade 1."""
        if isinstance(value, bool):
            raise ValueError("must be a number, the lowest relevance grade that counts as relevant")
        return value


def _source_kind(value: Any) -> str:
    return "beir-folder" if isinstance(value, dict) and "beir" in value else "set-file"


SetSource = Annotated[
    Annotated[SetFileSource, Tag("set-file")] | Annotated[BeirSource, Tag("beir-folder")],
    Discriminator(_source_kind),
]


class KindSpec(BaseModel):
    """`kind` picks the class; every other key is that kind's parameter, validated by the kind."""

    model_config = ConfigDict(frozen=True, extra="allow")
    kind: str

    @model_validator(mode="before")
    @classmethod
    def _misspelt_kind(cls, data: Any) -> Any:
        """Without `kind` every key is a parameter, so `kidn: lexical` would only be reported as no kind."""
        if isinstance(data, dict) and "kind" not in data:
            close = difflib.get_close_matches("kind", [str(key) for key in data], n=1, cutoff=0.6)
            if close:
                raise ValueError(f"{quoted(close[0])} is not a known key; did you mean 'kind'?")
        return data

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class RetrieverSpec(KindSpec):
    """A retriever: `kind` and that kind's parameters, and `conversation`, how it asks a conversation's
    turns, whatever its kind (query_modes.py)."""

    conversation: QueryMode = CURRENT

    @field_validator("conversation", mode="before")
    @classmethod
    def _query_mode(cls, value: Any) -> QueryMode:
        return value if isinstance(value, QueryMode) else query_mode(value)


class JudgeSpec(KindSpec):
    """A machine judge: `kind` picks the judge kind (`openai`, `rerank`, `callable`, or a plugin's); every
    other key is that kind's parameter, validated by the kind."""


class GeneratorSpec(KindSpec):
    """A question generator: `kind` picks the generator kind (`openai`, `callable`, `extractive`, or a
    plugin's); every other key is that kind's parameter, validated by the kind."""


class RewriterSpec(KindSpec):
    """A query rewriter a retriever's `conversation: {rewriter: NAME}` names: `kind` (`openai`, `callable`,
    or a plugin's); every other key is that kind's parameter, validated by the kind."""


class DagsterSection(_Section):
    """Read by the Dagster layer only; kept here so one file configures the whole project."""

    nightly_cron: str = "0 2 * * *"
    timezone: str = "UTC"
    sensor_interval_seconds: int = Field(300, ge=1)
    check_severity: Literal["ERROR", "WARN"] = "ERROR"


class LeaderboardSection(_Section):
    rank_by: str = TESTED[0].key
    """A figure key of the configured cut-offs (`top1`, `ndcg@10`, `hit_rate@3`); top-1 by default, the
    methodology's primary figure. Checked against the cut-offs in `ProjectConfig`, which knows them."""


class AuditSection(_Section):
    """How the label audit reads the history: the last `unstable_window` complete runs of each pair."""

    unstable_window: int = Field(5, ge=2)
    exclude_unstable: bool = False


class JudgingSection(_Section):
    """When `judge --apply --machine` lets a machine judge's answers into a set (docs/labels.md): at least
    `min_calibration_rows` rows answered by both a person and the judge, with Cohen's kappa at least
    `min_kappa` on them (0.4: the lower end of "moderate" agreement; LLM judges reach 0.3 to 0.65)."""

    min_calibration_rows: int = Field(50, ge=1)
    min_kappa: float = Field(0.4, ge=-1, le=1)

    def calibrated(self, n: int, kappa: float | None) -> bool:
        """The one rule for `judge --apply --machine`'s gate and the Dagster agreement check."""
        return n >= self.min_calibration_rows and kappa is not None and kappa >= self.min_kappa


class CoverageSection(_Section):
    """How `coverage` assigns logged queries to golden questions (docs/coverage.md calibrates both)."""

    threshold: float | None = Field(None, ge=0, le=1)
    """The least similarity for a query to count as covered; None: the calibrated default of the method
    (an encoder's cosine or the lexical analyzer's normalised BM25)."""
    min_share: float = Field(0.5, ge=0, le=1)
    """The Dagster check warns when less of the log's traffic than this is covered."""


class GenerationSection(_Section):
    """When a set's generated questions may count in its verdicts (docs/generating.md): when, for top-1,
    top-3 and nDCG, the lower bound of the 95% bootstrap interval of Kendall's tau between the retrievers'
    ranking on them and on the human questions reaches `min_tau` (0.8: synthetic and human queries ranked
    TREC systems with tau 0.83 to 0.86)."""

    min_tau: float = Field(0.8, ge=-1, le=1)


class ConfigFile(_Section):
    store: str = "results"
    retention_days: float = Field(DEFAULT_RETENTION_DAYS, gt=0)
    cutoffs: tuple[int, ...] = DEFAULT_CUTOFFS
    overfetch_multiplier: int = OVERFETCH_MULTIPLIER
    cache_dir: str | None = None
    vector_cache: str | None = None
    tolerances: Tolerances = Tolerances()
    """The one model every gate reads (checks/tolerances.py), validated here as a section."""
    baseline_policy: BaselinePolicy = BaselinePolicy.PREVIOUS
    question_sets: list[SetSource] = []
    retrievers: dict[str, RetrieverSpec] = {}
    judges: dict[str, JudgeSpec] = {}
    generators: dict[str, GeneratorSpec] = {}
    rewriters: dict[str, RewriterSpec] = {}
    dagster: DagsterSection = DagsterSection()
    audit: AuditSection = AuditSection()
    leaderboard: LeaderboardSection = LeaderboardSection()
    judging: JudgingSection = JudgingSection()
    generation: GenerationSection = GenerationSection()
    labels: Literal["human", "human+machine"] = "human"
    """Which labels score every run, comparison and report (`--labels` overrides): see machine_labels.py."""
    query_logs: dict[str, QueryLogSpec] = {}
    coverage: CoverageSection = CoverageSection()

    @field_validator("retrievers", "judges", "generators", "rewriters", "query_logs")
    @classmethod
    def _names(cls, named: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        """Retriever, judge, generator and log names end up in run keys, fingerprints and partition keys."""
        what = {
            "retrievers": "retriever identifier",
            "judges": "judge identifier",
            "generators": "generator identifier",
            "rewriters": "rewriter identifier",
            "query_logs": "query log name",
        }
        for identifier in named:
            check_identifier(identifier, what[info.field_name])
        return named

    @field_validator("retention_days")
    @classmethod
    def _retention(cls, days: float) -> float:
        return check_retention_days(days)

    @field_validator("cutoffs")
    @classmethod
    def _cutoffs(cls, values: tuple[int, ...]) -> tuple[int, ...]:
        CutOffs(values)
        return values

    @field_validator("overfetch_multiplier")
    @classmethod
    def _overfetch(cls, value: int) -> int:
        CutOffs(DEFAULT_CUTOFFS, value)
        return value
