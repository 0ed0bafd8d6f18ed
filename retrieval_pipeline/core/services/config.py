"""The project configuration file (YAML): store, question sets, named retrievers, tolerances, schedule.

Relative paths resolve against the file's folder; every error names the file and the key.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from retrieval_pipeline.core.base.errors import InvalidInputError, UnknownIdentifierError, quoted, validation_problem
from retrieval_pipeline.core.golden.question_sets import (
    QuestionSetRegistry,
    SetProvider,
    build_question_set_registry,
    entry_point_providers,
)
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet, check_identifier
from retrieval_pipeline.core.retrieval.retriever import BuildContext, Retriever, default_cache_dir
from retrieval_pipeline.core.scoring.measures import Figure, figure_names
from retrieval_pipeline.core.scoring.scoring import DEFAULT_CUTOFFS, OVERFETCH_MULTIPLIER, CutOffs
from retrieval_pipeline.core.scoring.tolerances import Tolerances, tolerance_fields, tolerance_problem
from retrieval_pipeline.core.services.baselines import BaselinePolicy

CONFIG_ENV_VAR = "RETRIEVAL_EVAL_CONFIG"
STORE_ENV_VAR = "RETRIEVAL_EVAL_STORE"
"""Replaces the configuration's `store`: read by the CLI's --store and by the Dagster code location."""
CONFIG_FILE_NAME = "retrieval-eval.yaml"
DEMO_NOTE = (
    f"no configuration was named, so the embedded demo is in use; name yours with --config FILE, "
    f"${CONFIG_ENV_VAR}, or a {CONFIG_FILE_NAME} in the current folder or a parent"
)
DEFAULT_RETENTION_DAYS = 30.0


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SetFileSource(_Section):
    file: str
    corpus: str | None = None


class BeirSource(_Section):
    beir: str
    identifier: str
    split: str = "test"
    name: str | None = None
    corpus: str | None = None

    @field_validator("identifier")
    @classmethod
    def _identifier(cls, value: str) -> str:
        return check_identifier(value, "set identifier")


def _source_kind(value: Any) -> str:
    return "beir-folder" if isinstance(value, dict) and "beir" in value else "set-file"


SetSource = Annotated[
    Annotated[SetFileSource, Tag("set-file")] | Annotated[BeirSource, Tag("beir-folder")],
    Discriminator(_source_kind),
]


class RetrieverSpec(BaseModel):
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


class _ToleranceChecks(_Section):
    """Every field, present or future, is checked by the one rule of `Tolerances` for its unit."""

    @field_validator("*", mode="before")
    @classmethod
    def _tolerance(cls, value: Any, info: ValidationInfo) -> Any:
        """Before pydantic's coercion, which would turn `true` into the tolerance 1.0."""
        problem = tolerance_problem(info.field_name, value)
        if problem:
            raise ValueError(problem)
        return value


ToleranceSection = create_model(
    "ToleranceSection",
    __base__=_ToleranceChecks,
    __doc__="The configuration's `tolerances`: exactly the fields and defaults of `Tolerances`, declared once there.",
    **{tolerance.name: (hint, tolerance.default) for tolerance, hint in tolerance_fields()},
)


class DagsterSection(_Section):
    """Read by the Dagster layer only; kept here so one file configures the whole project."""

    nightly_cron: str = "0 2 * * *"
    timezone: str = "UTC"
    sensor_interval_seconds: int = Field(300, ge=1)
    check_severity: Literal["ERROR", "WARN"] = "ERROR"


class LeaderboardSection(_Section):
    rank_by: str = "top1"
    """A figure key of the configured cut-offs (`top1`, `ndcg@10`, `hit_rate@3`); top-1 by default, the
    methodology's primary figure. Checked against the cut-offs in `ProjectConfig`, which knows them."""


class AuditSection(_Section):
    """How the label audit reads the history: the last `unstable_window` complete runs of each pair."""

    unstable_window: int = Field(5, ge=2)
    exclude_unstable: bool = False


class _ConfigFile(_Section):
    store: str = "results"
    retention_days: float = Field(DEFAULT_RETENTION_DAYS, gt=0)
    cutoffs: tuple[int, ...] = DEFAULT_CUTOFFS
    overfetch_multiplier: int = OVERFETCH_MULTIPLIER
    cache_dir: str | None = None
    tolerances: ToleranceSection = ToleranceSection()
    baseline_policy: BaselinePolicy = BaselinePolicy.PREVIOUS
    question_sets: list[SetSource] = []
    retrievers: dict[str, RetrieverSpec] = {}
    dagster: DagsterSection = DagsterSection()
    audit: AuditSection = AuditSection()
    leaderboard: LeaderboardSection = LeaderboardSection()

    @field_validator("retrievers")
    @classmethod
    def _retriever_identifiers(cls, retrievers: dict[str, RetrieverSpec]) -> dict[str, RetrieverSpec]:
        for identifier in retrievers:
            check_identifier(identifier, "retriever identifier")
        return retrievers

    @field_validator("retention_days")
    @classmethod
    def _retention(cls, days: float) -> float:
        from retrieval_pipeline.core.storage.retention import check_retention_days

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


class ProjectConfig:
    """A loaded configuration; sets and retrievers are built on first use and then reused."""

    def __init__(self, data: _ConfigFile, path: Path):
        self.path = path
        self.base_dir = path.parent
        self._data = data
        self.cutoffs = CutOffs(data.cutoffs, data.overfetch_multiplier)
        self.tolerances = Tolerances(**data.tolerances.model_dump())
        self.baseline_policy = data.baseline_policy
        self.retention_days = data.retention_days
        self.dagster = data.dagster
        self.audit = data.audit
        self.rank_by = _ranking_figure(data.leaderboard.rank_by, self.cutoffs.values, path)
        self.retriever_specs = data.retrievers
        self._retrievers: dict[str, Retriever] = {}
        self._corpora: dict[str, frozenset[str] | None] = {}

    @property
    def source(self) -> str:
        return str(self.path)

    @property
    def store_uri(self) -> str:
        """A URI with a scheme is kept; a plain path resolves against the configuration's folder."""
        store = self._data.store
        return store if "://" in store else str(self.resolve(store))

    @property
    def cache_dir(self) -> Path:
        return self.resolve(self._data.cache_dir) if self._data.cache_dir else default_cache_dir()

    def resolve(self, path: str) -> Path:
        candidate = Path(path).expanduser()
        return candidate if candidate.is_absolute() else self.base_dir / candidate

    @cached_property
    def question_sets(self) -> QuestionSetRegistry:
        return build_question_set_registry([*self._set_providers(), *entry_point_providers()])

    def set_corpus(self, identifier: str) -> Path | None:
        """The corpus a set entry names (`corpus:`; a BEIR folder's own corpus.jsonl by default)."""
        source = self.question_sets.source_of(identifier)
        for entry, provider_source, _ in self._set_entries():
            if provider_source == source:
                if entry.corpus is not None:
                    return self.resolve(entry.corpus)
                if isinstance(entry, BeirSource):
                    beir_corpus = self.resolve(entry.beir) / "corpus.jsonl"
                    return beir_corpus if beir_corpus.is_file() else None
        return None

    def _set_providers(self) -> Iterable[SetProvider]:
        for _, source, provide in self._set_entries():
            yield source, provide

    def _set_entries(self) -> Iterable[tuple[SetFileSource | BeirSource, str, Callable[[], list[GoldenQuestionSet]]]]:
        from retrieval_pipeline.core.golden.beir import import_beir
        from retrieval_pipeline.core.golden.question_files import load_question_set_file

        for source in self._data.question_sets:
            if isinstance(source, SetFileSource):
                path = self.resolve(source.file)
                yield source, str(path), lambda path=path: [load_question_set_file(path)]
            else:
                path = self.resolve(source.beir)
                yield (
                    source,
                    f"{path} (BEIR, {source.split})",
                    lambda s=source, path=path: [import_beir(path, identifier=s.identifier, split=s.split, name=s.name)],
                )

    @property
    def is_demo(self) -> bool:
        return self.path == demo_config_path().resolve()

    def question_set(self, identifier: str) -> GoldenQuestionSet:
        """On the embedded demo an unknown set most likely means no configuration was named: said so."""
        try:
            return self.question_sets[identifier]
        except UnknownIdentifierError as error:
            if not self.is_demo:
                raise
            raise UnknownIdentifierError(error.what, identifier, error.known, DEMO_NOTE) from None

    @property
    def retriever_identifiers(self) -> list[str]:
        return list(self.retriever_specs)

    def retriever(self, identifier: str, progress: Callable[[str], None] | None = None) -> Retriever:
        """Built once per configuration; a kind such as fusion may ask for other named retrievers. A long
        build (encoding a corpus) tells `progress` how it goes."""
        if identifier not in self._retrievers:
            from retrieval_pipeline.core.retrieval.retriever_kinds import build_retriever

            if identifier not in self.retriever_specs:
                raise UnknownIdentifierError("retriever", identifier, self.retriever_specs, DEMO_NOTE if self.is_demo else None)
            spec = self.retriever_specs[identifier]
            self._retrievers[identifier] = build_retriever(identifier, spec.kind, spec.params, self._build_context(progress))
        return self._retrievers[identifier]

    def check_retrievers(self) -> None:
        """Every retriever's kind and parameters, refused as building it would refuse them, with no index built."""
        for identifier in self.retriever_specs:
            self.check_retriever(identifier)

    def check_retriever(self, identifier: str) -> None:
        """One retriever checked as `check_retrievers` checks each: `list` reports each one's problem apart."""
        from retrieval_pipeline.core.retrieval.retriever_kinds import check_retriever

        spec = self.retriever_specs[identifier]
        check_retriever(identifier, spec.kind, spec.params, self._build_context())

    def retriever_corpus(self, identifier: str) -> frozenset[str] | None:
        """The documents retriever `identifier` can return, when its kind knows them (see retriever_kinds).
        Read once per configuration, like the retrievers: every set's label check asks for every corpus."""
        if identifier not in self._corpora:
            from retrieval_pipeline.core.retrieval.retriever_kinds import retriever_corpus

            spec = self.retriever_specs[identifier]
            self._corpora[identifier] = retriever_corpus(identifier, spec.kind, spec.params, self._build_context())
        return self._corpora[identifier]

    def retriever_echoes(self, identifier: str) -> tuple[str, ...]:
        """The retrievers whose rankings retriever `identifier` repeats (a fusion's members), read without
        building anything (see retriever_kinds)."""
        from retrieval_pipeline.core.retrieval.retriever_kinds import retriever_echoes

        spec = self.retriever_specs[identifier]
        return retriever_echoes(identifier, spec.kind, spec.params, self._build_context())

    def retriever_corpus_texts(self, identifier: str, wanted: Collection[str]) -> Mapping[str, tuple[str, str]] | None:
        """(title, text) of the wanted documents when retriever `identifier`'s kind knows its corpus."""
        from retrieval_pipeline.core.retrieval.retriever_kinds import retriever_corpus_texts

        spec = self.retriever_specs[identifier]
        return retriever_corpus_texts(identifier, spec.kind, spec.params, self._build_context(), wanted)

    def _build_context(self, progress: Callable[[str], None] | None = None) -> BuildContext:
        return BuildContext(
            base_dir=self.base_dir,
            source=self.source,
            load_question_sets=lambda: self.question_sets,
            cache_dir=self.cache_dir,
            build_retriever=self.retriever,
            fetch_limit=self.cutoffs.fetch_limit,
            known_retrievers=tuple(self.retriever_specs),
            progress=progress,
        )


def _ranking_figure(name: str, cutoffs: tuple[int, ...], path: Path) -> Figure:
    known = figure_names(cutoffs)
    if name not in known:
        raise InvalidInputError(
            f"unknown figure {quoted(name)} to rank by; known at cut-offs {list(cutoffs)}: {', '.join(known)}",
            source=str(path),
            key="leaderboard",
            field="rank_by",
        )
    return known[name]


def load_config(path: str | Path) -> ProjectConfig:
    from retrieval_pipeline.core.base.text_files import parse_yaml, read_text

    path = Path(path)
    raw = parse_yaml(read_text(path, "configuration"), str(path)) or {}
    if not isinstance(raw, dict):
        raise InvalidInputError("the configuration must be a mapping", source=str(path))
    try:
        data = _ConfigFile.model_validate(raw)
    except ValidationError as error:
        location, message = validation_problem(error, _ConfigFile, noun="key")
        raise InvalidInputError(
            message, source=str(path), key=".".join(location[:-1]) or None, field=location[-1] if location else None
        ) from None
    return ProjectConfig(data, path.resolve())


def demo_config_path() -> Path:
    """The embedded demo, used when no configuration is given."""
    return Path(__file__).resolve().parents[2] / "demo" / "config.yaml"


def find_config_file(start: Path) -> Path | None:
    """`retrieval-eval.yaml` in `start` or the nearest parent holding one, as ruff and pytest find theirs."""
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_FILE_NAME
        if candidate.is_file():
            return candidate
    return None


def default_config_path(cwd: Path | None = None) -> Path:
    """$RETRIEVAL_EVAL_CONFIG, else a `retrieval-eval.yaml` found from `cwd` up, else the embedded demo."""
    explicit = os.environ.get(CONFIG_ENV_VAR)
    if explicit:
        return Path(explicit)
    return find_config_file((cwd or Path.cwd()).resolve()) or demo_config_path()
