"""The project configuration (YAML) as the project sees it: store, question sets, named retrievers,
tolerances, schedule; sets and retrievers built from it on first use.

The file's schema is `config_file`; which file is read when none is named is `config_lookup`. Relative
paths resolve against the file's folder; every error names the file and the key.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from retrieval_pipeline.core.base.errors import InvalidInputError, UnknownIdentifierError, quoted, validation_problem
from retrieval_pipeline.core.golden.query_logs import QueryLogSpec
from retrieval_pipeline.core.golden.question_sets import (
    QuestionSetRegistry,
    SetProvider,
    build_question_set_registry,
    entry_point_providers,
)
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.retrieval.judges import Judge
from retrieval_pipeline.core.retrieval.retriever import BuildContext, Retriever, default_cache_dir
from retrieval_pipeline.core.scoring.measures import Figure, figure_names
from retrieval_pipeline.core.scoring.scoring import CutOffs
from retrieval_pipeline.core.scoring.tolerances import Tolerances
from retrieval_pipeline.core.services.config_file import BeirSource, ConfigFile, SetFileSource
from retrieval_pipeline.core.services.config_lookup import DEMO_NOTE, demo_config_path

if TYPE_CHECKING:
    from retrieval_pipeline.core.golden.beir import ImportedSet


class ProjectConfig:
    """A loaded configuration; sets and retrievers are built on first use and then reused."""

    def __init__(self, data: ConfigFile, path: Path):
        self.path = path
        self.base_dir = path.parent
        self._data = data
        self.cutoffs = CutOffs(data.cutoffs, data.overfetch_multiplier)
        self.tolerances = Tolerances(**data.tolerances.model_dump())
        self.baseline_policy = data.baseline_policy
        self.retention_days = data.retention_days
        self.dagster = data.dagster
        self.audit = data.audit
        self.judging = data.judging
        self.labels = data.labels
        self.query_logs = data.query_logs
        self.coverage = data.coverage
        self.rank_by = _ranking_figure(data.leaderboard.rank_by, self.cutoffs.values, path)
        self.retriever_specs = data.retrievers
        self.judge_specs = data.judges
        self._retrievers: dict[str, Retriever] = {}
        self._judges: dict[str, Judge] = {}
        self._corpora: dict[str, frozenset[str] | None] = {}
        self._beir_imports: dict[BeirSource, ImportedSet] = {}

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

    @cached_property
    def question_sets(self) -> QuestionSetRegistry:
        return build_question_set_registry([*self._set_providers(), *entry_point_providers()])

    def set_corpus(self, identifier: str) -> Path | None:
        """The corpus a set entry names (`corpus:`; a BEIR folder's own corpus.jsonl by default)."""
        entry = self._entry_of(identifier)
        if entry is not None and entry.corpus is not None:
            return self.resolve(entry.corpus)
        if isinstance(entry, BeirSource):
            beir_corpus = self.resolve(entry.beir) / "corpus.jsonl"
            return beir_corpus if beir_corpus.is_file() else None
        return None

    def set_traffic(self, identifier: str) -> str | None:
        """The query log a set entry names for its traffic-weighted figures (`traffic:`); None for none. A
        log that is neither configured nor a file is bad input of this file, named with the set's entry."""
        entry = self._entry_of(identifier)
        if entry is None or entry.traffic is None:
            return None
        try:
            self.query_log(entry.traffic)
        except UnknownIdentifierError as error:
            position = self._data.question_sets.index(entry)
            raise InvalidInputError(str(error), source=self.source, key=f"question_sets.{position}", field="traffic") from None
        return entry.traffic

    def set_left_out(self, identifier: str) -> tuple[str, ...] | None:
        """The judged queries a set read from a BEIR folder left out (judged only not relevant, under its
        `min_relevance`), so `list` can say why the set is smaller than its qrels; None for any other set."""
        entry = self._entry_of(identifier)
        return self._imported_beir(entry).left_out if isinstance(entry, BeirSource) else None

    def _entry_of(self, identifier: str) -> SetFileSource | BeirSource | None:
        """The configuration entry set `identifier` came from; None for a plugin's set."""
        source = self.question_sets.source_of(identifier)
        return next((entry for entry, provider_source, _ in self._set_entries() if provider_source == source), None)

    def _set_providers(self) -> Iterable[SetProvider]:
        for _, source, provide in self._set_entries():
            yield source, provide

    def _set_entries(self) -> Iterable[tuple[SetFileSource | BeirSource, str, Callable[[], list[GoldenQuestionSet]]]]:
        from retrieval_pipeline.core.golden.question_files import load_question_set_file

        for source in self._data.question_sets:
            if isinstance(source, SetFileSource):
                path = self.resolve(source.file)
                yield source, str(path), lambda path=path: [load_question_set_file(path)]
            else:
                yield (
                    source,
                    f"{self.resolve(source.beir)} (BEIR, {source.split})",
                    lambda s=source: [self._imported_beir(s).question_set],
                )

    def _imported_beir(self, entry: BeirSource) -> ImportedSet:
        """A BEIR entry read once: its set for the registry and the queries it left out for `list`."""
        if entry not in self._beir_imports:
            from retrieval_pipeline.core.golden.beir import imported_beir

            self._beir_imports[entry] = imported_beir(
                self.resolve(entry.beir),
                identifier=entry.identifier,
                split=entry.split,
                name=entry.name,
                min_relevance=entry.min_relevance,
            )
        return self._beir_imports[entry]

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
            self._retrievers[identifier] = build_retriever(identifier, spec.kind, spec.params, self.build_context(progress))
        return self._retrievers[identifier]

    def check_retrievers(self) -> None:
        """Every retriever's kind and parameters, refused as building it would refuse them, with no index built."""
        for identifier in self.retriever_specs:
            self.check_retriever(identifier)

    def check_retriever(self, identifier: str) -> None:
        """One retriever checked as `check_retrievers` checks each: `list` reports each one's problem apart."""
        from retrieval_pipeline.core.retrieval.retriever_kinds import check_retriever

        spec = self.retriever_specs[identifier]
        check_retriever(identifier, spec.kind, spec.params, self.build_context())

    def retriever_corpus(self, identifier: str) -> frozenset[str] | None:
        """The documents retriever `identifier` can return, when its kind knows them (see retriever_kinds).
        Read once per configuration, like the retrievers: every set's label check asks for every corpus."""
        if identifier not in self._corpora:
            from retrieval_pipeline.core.retrieval.retriever_kinds import retriever_corpus

            spec = self.retriever_specs[identifier]
            self._corpora[identifier] = retriever_corpus(identifier, spec.kind, spec.params, self.build_context())
        return self._corpora[identifier]

    def retriever_echoes(self, identifier: str) -> tuple[str, ...]:
        """The retrievers whose rankings retriever `identifier` repeats (a fusion's members), read without
        building anything (see retriever_kinds)."""
        from retrieval_pipeline.core.retrieval.retriever_kinds import retriever_echoes

        spec = self.retriever_specs[identifier]
        return retriever_echoes(identifier, spec.kind, spec.params, self.build_context())

    def retriever_corpus_texts(self, identifier: str, wanted: Collection[str]) -> Mapping[str, tuple[str, str]] | None:
        """(title, text) of the wanted documents when retriever `identifier`'s kind knows its corpus."""
        from retrieval_pipeline.core.retrieval.retriever_kinds import retriever_corpus_texts

        spec = self.retriever_specs[identifier]
        return retriever_corpus_texts(identifier, spec.kind, spec.params, self.build_context(), wanted)

    def judge(self, name: str) -> Judge:
        """A machine judge of the `judges:` section, built once per configuration."""
        if name not in self._judges:
            from retrieval_pipeline.core.retrieval.judge_kinds import build_judge

            if not self.judge_specs:  # "available: none" alone leaves a newcomer guessing where judges come from
                note = f"no judges are configured in {self.source}: name one under `judges:`, see docs/configuration.md"
                raise UnknownIdentifierError("judge", name, (), note)
            if name not in self.judge_specs:
                raise UnknownIdentifierError("judge", name, self.judge_specs)
            spec = self.judge_specs[name]
            self._judges[name] = build_judge(name, spec.kind, spec.params, self.build_context())
        return self._judges[name]

    @property
    def judgement_cache(self) -> Path:
        """Where machine judges' answers are kept, keyed by judge fingerprint and texts, across files."""
        return self.cache_dir / "judgements"

    def question_encoder(self, identifier: str) -> Callable[[Sequence[str]], Any] | None:
        """How retriever `identifier` embeds a question (None: its kind embeds nothing), built without its index."""
        from retrieval_pipeline.core.retrieval.retriever_kinds import retriever_question_encoder

        spec = self.retriever_specs[identifier]
        return retriever_question_encoder(identifier, spec.kind, spec.params, self.build_context())

    def embeds_questions(self, identifier: str) -> bool:
        """Whether retriever `identifier`'s kind offers a question encoder, asked without loading a model."""
        from retrieval_pipeline.core.retrieval.retriever_kinds import embeds_questions

        return embeds_questions(self.retriever_specs[identifier].kind)

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


def load_config(path: str | Path) -> ProjectConfig:
    from retrieval_pipeline.core.base.text_files import parse_yaml, read_text

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
