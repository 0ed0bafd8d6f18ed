"""The project configuration (YAML) as the project sees it: store, question sets, named retrievers,
tolerances, schedule; sets and retrievers built from it on first use.

The file's schema is `schema`; which file is read when none is named is `lookup`. Relative
paths resolve against the file's folder; every error names the file and the key. `ProjectConfig` is the
facade every caller holds: its question-set side is `sets`, its retrievers' `retrievers`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from retrieval_pipeline.core.base.errors import InvalidInputError, UnknownIdentifierError, quoted, validation_problem
from retrieval_pipeline.core.base.redaction import fingerprint, redacted
from retrieval_pipeline.core.base.text_files import parse_yaml, read_text
from retrieval_pipeline.core.golden.query_logs import QueryLogSpec
from retrieval_pipeline.core.golden.question_sets import QuestionSetRegistry
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.retrieval.generators import GENERATORS, Generator
from retrieval_pipeline.core.retrieval.judges import JUDGES, Judge
from retrieval_pipeline.core.retrieval.query_modes import QueryPlan
from retrieval_pipeline.core.retrieval.retriever import BuildContext, Retriever, default_cache_dir
from retrieval_pipeline.core.retrieval.rewriters import REWRITERS, Rewriter
from retrieval_pipeline.core.scoring.measures import Figure, figure_names
from retrieval_pipeline.core.scoring.scoring import CutOffs
from retrieval_pipeline.core.services.configuration.lookup import DEMO_NOTE, demo_config_path
from retrieval_pipeline.core.services.configuration.retrievers import ConfiguredRetrievers
from retrieval_pipeline.core.services.configuration.schema import ConfigFile
from retrieval_pipeline.core.services.configuration.sets import ConfiguredSets

if TYPE_CHECKING:
    from retrieval_pipeline.core.retrieval.retriever_kinds import RetrieverKind


class ProjectConfig:
    """A loaded configuration; sets and retrievers are built on first use and then reused."""

    def __init__(self, data: ConfigFile, path: Path):
        self.path = path
        self.base_dir = path.parent
        self._data = data
        self.cutoffs = CutOffs(data.cutoffs, data.overfetch_multiplier)
        self.tolerances = data.tolerances
        self.baseline_policy = data.baseline_policy
        self.retention_days = data.retention_days
        self.dagster = data.dagster
        self.audit = data.audit
        self.judging = data.judging
        self.generation = data.generation
        self.labels = data.labels
        self.query_logs = data.query_logs
        self.coverage = data.coverage
        self.rank_by = _ranking_figure(data.leaderboard.rank_by, self.cutoffs.values, path)
        self.retriever_specs = data.retrievers
        self.judge_specs = data.judges
        self.generator_specs = data.generators
        self.rewriter_specs = data.rewriters
        _check_rewriters_named(data, path)
        self._sets = ConfiguredSets(data.question_sets, self.resolve, self.source, self.query_log)
        self._retrievers = ConfiguredRetrievers(data.retrievers, self.build_context, DEMO_NOTE if self.is_demo else None)
        self._judges: dict[str, Judge] = {}
        self._rewriters: dict[str, Rewriter] = {}

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

    @property
    def vector_cache(self) -> str | None:
        """A URI with a scheme is kept (s3://, gs://, memory://); a plain path resolves like the store's."""
        cache = self._data.vector_cache
        return cache if cache is None or "://" in cache else str(self.resolve(cache))

    def resolve(self, path: str) -> Path:
        candidate = Path(path).expanduser()
        return candidate if candidate.is_absolute() else self.base_dir / candidate

    def query_log(self, name: str) -> tuple[QueryLogSpec, Path]:
        """A configured log's settings and resolved path; a name that is not configured but an existing
        file is read with the default settings (field `query`, format from the suffix, no examples)."""
        if name in self.query_logs:
            spec = self.query_logs[name]
            return spec, self.resolve(spec.path)
        if Path(name).expanduser().is_file():
            return QueryLogSpec(path=name), Path(name).expanduser()
        raise UnknownIdentifierError("query log", name, self.query_logs, "nor the path of an existing log file")

    @property
    def question_sets(self) -> QuestionSetRegistry:
        return self._sets.registry

    def set_corpus(self, identifier: str) -> Path | None:
        return self._sets.corpus(identifier)

    def set_traffic(self, identifier: str) -> str | None:
        return self._sets.traffic(identifier)

    def set_left_out(self, identifier: str) -> tuple[str, ...] | None:
        return self._sets.left_out(identifier)

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
        return self._retrievers.built(identifier, progress)

    def retriever_kind(self, identifier: str) -> RetrieverKind:
        """Retriever `identifier`'s kind, its parameters checked once and nothing built: ask it what it
        knows (`corpus()`, `corpus_texts(wanted)`, `echoed()`, `question_encoder()`)."""
        return self._retrievers.kind(identifier)

    def retriever_kind_class(self, identifier: str) -> type[RetrieverKind]:
        """The class of retriever `identifier`'s kind, its parameters unread (`RetrieverKind`: not installed)."""
        return self._retrievers.kind_class(identifier)

    def check_retrievers(self) -> None:
        """Every retriever's kind and parameters, refused as building it would refuse them, with no index built."""
        for identifier in self.retriever_specs:
            self.retriever_kind(identifier)

    def judge(self, name: str) -> Judge:
        """A machine judge of the `judges:` section, built once per configuration."""
        if name not in self._judges:
            if not self.judge_specs:  # "available: none" alone leaves a newcomer guessing where judges come from
                note = f"no judges are configured in {self.source}: name one under `judges:`, see docs/configuration.md"
                raise UnknownIdentifierError("judge", name, (), note)
            if name not in self.judge_specs:
                raise UnknownIdentifierError("judge", name, self.judge_specs)
            spec = self.judge_specs[name]
            self._judges[name] = JUDGES.build(name, spec.kind, spec.params, self.build_context())
        return self._judges[name]

    def generator(self, name: str) -> Generator:
        """A question generator of the `generators:` section (built on each call: it holds no index)."""
        if name not in self.generator_specs:
            note = (
                None if self.generator_specs else f"no generators are configured in {self.source}: name one under `generators:`"
            )
            raise UnknownIdentifierError("generator", name, self.generator_specs, note)
        spec = self.generator_specs[name]
        return GENERATORS.build(name, spec.kind, spec.params, self.build_context())

    def rewriter(self, name: str) -> Rewriter:
        """A query rewriter of the `rewriters:` section, built once per configuration."""
        if name not in self._rewriters:
            if name not in self.rewriter_specs:
                raise UnknownIdentifierError("rewriter", name, self.rewriter_specs)
            spec = self.rewriter_specs[name]
            self._rewriters[name] = REWRITERS.build(name, spec.kind, spec.params, self.build_context())
        return self._rewriters[name]

    def query_plan(self, identifier: str) -> QueryPlan:
        """How retriever `identifier` asks a conversation's turns (its `conversation:` key); a rewriter it
        names is built only when a set has turns to rewrite."""
        spec = self.retriever_specs[identifier]
        mode, setup = spec.conversation, fingerprint(spec.kind, redacted(spec.params))
        if mode.rewriter is None:
            return QueryPlan(mode, setup=setup)
        return QueryPlan(mode, lambda: self.rewriter(mode.rewriter), self.rewrite_cache, setup)

    @property
    def rewrite_cache(self) -> Path:
        """Where rewriters' rewrites are kept, keyed by rewriter fingerprint and conversation, across runs."""
        return self.cache_dir / "rewrites"

    @property
    def generation_cache(self) -> Path:
        """Where generators' questions are kept, keyed by generator fingerprint and request, across runs."""
        return self.cache_dir / "generations"

    @property
    def judgement_cache(self) -> Path:
        """Where machine judges' answers are kept, keyed by judge fingerprint and texts, across files."""
        return self.cache_dir / "judgements"

    def build_context(self, progress: Callable[[str], None] | None = None) -> BuildContext:
        return BuildContext(
            base_dir=self.base_dir,
            source=self.source,
            load_question_sets=lambda: self.question_sets,
            cache_dir=self.cache_dir,
            vector_cache=self.vector_cache,
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


def _check_rewriters_named(data: ConfigFile, path: Path) -> None:
    """A retriever's `conversation: {rewriter: NAME}` names a rewriter of the `rewriters:` section."""
    for identifier, spec in data.retrievers.items():
        name = spec.conversation.rewriter
        if name is not None and name not in data.rewriters:
            known = ", ".join(sorted(data.rewriters)) or "none; name one under `rewriters:`"
            raise InvalidInputError(
                f"no rewriter {quoted(name)} is configured (rewriters: {known})",
                source=str(path),
                key=f"retrievers.{identifier}",
                field="conversation",
            )


def load_config(path: str | Path) -> ProjectConfig:
    path = Path(path)
    raw = parse_yaml(read_text(path, "configuration"), str(path)) or {}
    if not isinstance(raw, dict):
        raise InvalidInputError("the configuration must be a mapping", source=str(path))
    try:
        data = ConfigFile.model_validate(raw)
    except ValidationError as error:
        location, message = validation_problem(error, ConfigFile, noun="key")
        raise InvalidInputError(
            message, source=str(path), key=".".join(location[:-1]) or None, field=location[-1] if location else None
        ) from None
    return ProjectConfig(data, path.resolve())
