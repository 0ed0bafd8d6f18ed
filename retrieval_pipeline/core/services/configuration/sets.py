"""The question sets of a configuration: its `question_sets:` entries (set files and BEIR folders) with
the sets plugins provide, and what each entry says beside its questions (corpus, traffic, the judged
queries a BEIR folder left out). The project facade, `ProjectConfig`, holds one and answers through it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError, UnknownIdentifierError
from retrieval_pipeline.core.golden.beir import ImportedSet, imported_beir
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.golden.question_sets import (
    QuestionSetRegistry,
    SetProvider,
    build_question_set_registry,
    entry_point_providers,
)
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.services.configuration.schema import BeirSource, SetFileSource


class ConfiguredSets:
    """The entries are read on first use, a BEIR folder once, however many questions are asked of it."""

    def __init__(
        self,
        entries: Sequence[SetFileSource | BeirSource],
        resolve: Callable[[str], Path],
        source: str,
        query_log: Callable[[str], object],
    ):
        self._entries = entries
        self._resolve = resolve
        self._source = source
        self._query_log = query_log
        self._beir_imports: dict[BeirSource, ImportedSet] = {}

    @cached_property
    def registry(self) -> QuestionSetRegistry:
        return build_question_set_registry([*self._providers(), *entry_point_providers()])

    def corpus(self, identifier: str) -> Path | None:
        """The corpus a set entry names (`corpus:`; a BEIR folder's own corpus.jsonl by default)."""
        entry = self._entry_of(identifier)
        if entry is not None and entry.corpus is not None:
            return self._resolve(entry.corpus)
        if isinstance(entry, BeirSource):
            beir_corpus = self._resolve(entry.beir) / "corpus.jsonl"
            return beir_corpus if beir_corpus.is_file() else None
        return None

    def traffic(self, identifier: str) -> str | None:
        """The query log a set entry names for its traffic-weighted figures (`traffic:`); None for none. A
        log that is neither configured nor a file is bad input of this file, named with the set's entry."""
        entry = self._entry_of(identifier)
        if entry is None or entry.traffic is None:
            return None
        try:
            self._query_log(entry.traffic)
        except UnknownIdentifierError as error:
            position = self._entries.index(entry)
            raise InvalidInputError(str(error), source=self._source, key=f"question_sets.{position}", field="traffic") from None
        return entry.traffic

    def left_out(self, identifier: str) -> tuple[str, ...] | None:
        """The judged queries a set read from a BEIR folder left out (judged only not relevant, under its
        `min_relevance`), so `list` can say why the set is smaller than its qrels; None for any other set."""
        entry = self._entry_of(identifier)
        return self._imported_beir(entry).left_out if isinstance(entry, BeirSource) else None

    def _entry_of(self, identifier: str) -> SetFileSource | BeirSource | None:
        """The configuration entry set `identifier` came from; None for a plugin's set."""
        source = self.registry.source_of(identifier)
        return next((entry for entry, provider_source, _ in self._read_entries() if provider_source == source), None)

    def _providers(self) -> Iterable[SetProvider]:
        for _, source, provide in self._read_entries():
            yield source, provide

    def _read_entries(self) -> Iterable[tuple[SetFileSource | BeirSource, str, Callable[[], list[GoldenQuestionSet]]]]:
        for entry in self._entries:
            if isinstance(entry, SetFileSource):
                path = self._resolve(entry.file)
                yield entry, str(path), lambda path=path: [load_question_set_file(path)]
            else:
                yield (
                    entry,
                    f"{self._resolve(entry.beir)} (BEIR, {entry.split})",
                    lambda beir=entry: [self._imported_beir(beir).question_set],
                )

    def _imported_beir(self, entry: BeirSource) -> ImportedSet:
        """A BEIR entry read once: its set for the registry and the queries it left out for `list`."""
        if entry not in self._beir_imports:
            self._beir_imports[entry] = imported_beir(
                self._resolve(entry.beir),
                identifier=entry.identifier,
                split=entry.split,
                name=entry.name,
                min_relevance=entry.min_relevance,
            )
        return self._beir_imports[entry]
