"""Replay rankings another system produced, so a pipeline this project cannot call can still be measured.

A team dumps its system's rankings once (a TREC run `qid Q0 docid rank score tag`, or JSONL
`{"query_id": ..., "document_ids": [...]}`) and evaluates that file like any live retriever. The golden
set asks by question text while a run is keyed by query id, so the text is mapped to its id through a
question set (named, or every configured one) or a BEIR `queries.jsonl`. Reading the file, in
trec_eval's order, is `core/retrieval/run_files.py`'s job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field

from retrieval_pipeline.core.base.errors import InvalidInputError, UnknownIdentifierError, quoted
from retrieval_pipeline.core.retrieval.kinds import KindContext, KindParams
from retrieval_pipeline.core.retrieval.retriever import RetrieverFault, document_id_from_chunk
from retrieval_pipeline.core.retrieval.run_files import Rankings, RunFormat, id_text, load_run
from retrieval_pipeline.retrievers.base.corpus import CorpusKind

if TYPE_CHECKING:
    import pyarrow as pa


class UnresolvableQuestion(RetrieverFault):
    """The question text maps to no query id, or to several: asking again cannot change that."""


class RunFileParams(KindParams):
    path: str = Field(min_length=1)
    format: RunFormat | None = None
    question_set: str | None = None
    queries: str | None = None
    chunk_separator: str | None = Field(None, min_length=1)
    corpus: str | None = Field(None, min_length=1)


@dataclass(frozen=True)
class RunSource:
    path: Path
    format: RunFormat | None
    key: str

    def load(self, depth: int | None) -> Rankings:
        return load_run(self.path, self.format, key=self.key, depth=depth)


class RunFileKind(CorpusKind):
    """`kind: run_file`: the file present and one source of query ids, checked; the run loaded when built."""

    Params = RunFileParams
    corpus_key = ".corpus"  # only a corpus the user names: the run lists just the documents it happened to rank

    def checked(self) -> None:
        kind = KindContext.of(self)
        if self.params.question_set is not None and self.params.queries is not None:
            raise kind.invalid("give question_set or queries, not both: they are two sources of query ids", "queries")
        path = kind.resolve(self.params.path)
        if not path.is_file():
            raise InvalidInputError("cannot read the run file (no such file)", source=str(path), key=kind.key, field="path")

    def build(self) -> RunFileRetriever:
        """The run is loaded here, so a bad file stops the configuration instead of failing every question.

        It keeps the documents per query the evaluation will ask for (`context.fetch_limit`), not the
        whole file, which may be a hundred times more.
        """
        parsed, kind = self.params, KindContext.of(self)
        source = RunSource(kind.resolve(parsed.path), parsed.format, kind.key)
        rankings = source.load(self.context.fetch_limit)
        pairs, texts_from = _text_id_pairs(parsed, kind)
        query_ids: dict[str, dict[str, str]] = {}
        for text, query_id, origin in pairs:
            query_ids.setdefault(text.strip(), {}).setdefault(query_id, origin)
        return RunFileRetriever(self.name, source, rankings, query_ids, texts_from, parsed.chunk_separator)


class RunFileRetriever:
    """Answers a question with the run's ranking for that question's query id, best first."""

    def __init__(
        self,
        identifier: str,
        source: RunSource,
        rankings: Rankings,
        query_ids: Mapping[str, Mapping[str, str]],
        texts_from: str,
        chunk_separator: str | None = None,
    ):
        self.identifier = identifier
        self._source = source
        self._rankings = rankings
        self._query_ids = query_ids
        self._texts_from = texts_from
        self._chunk_separator = chunk_separator

    def index_version(self) -> str:
        """The checksum of the bytes loaded: a new export of the run is a new version, a touch is not."""
        return f"sha256:{self._rankings.checksum}"

    def retrieve(self, question: str, limit: int) -> list[str]:
        ranking = self._rankings_for(limit).top(self._query_id(question), limit)
        if self._chunk_separator is None:
            return ranking
        return [document_id_from_chunk(chunk_id, self._chunk_separator) for chunk_id in ranking]

    def retrieve_batch(self, questions: Sequence[str], limit: int) -> pa.ListArray | list[list[str]]:
        """The rankings as one Arrow array, cut from the run's own (ids mapped from chunks one by one)."""
        if self._chunk_separator is not None:
            return [self.retrieve(question, limit) for question in questions]
        return self._rankings_for(limit).table([self._query_id(question) for question in questions], limit)

    def _rankings_for(self, limit: int) -> Rankings:
        """Asked deeper than it kept (a fusion with its own depth), it reads the same file again keeping more."""
        if not self._rankings.covers(limit):
            deeper = self._source.load(limit)
            if deeper.checksum != self._rankings.checksum:
                raise RetrieverFault(f"the run file {self._source.path} changed since it was loaded; evaluate again")
            self._rankings = deeper
        return self._rankings

    def _query_id(self, question: str) -> str:
        candidates = self._query_ids.get(question.strip())
        if not candidates:
            raise UnresolvableQuestion(
                f"the question {quoted(question)} is not in {self._texts_from}, so its query id is unknown"
            )
        if len(candidates) > 1:
            listing = ", ".join(f"query {quoted(query_id)} in {origin}" for query_id, origin in candidates.items())
            raise UnresolvableQuestion(
                f"the question {quoted(question)} is ambiguous: it is {listing}; set question_set or queries to pick one"
            )
        return next(iter(candidates))


def _text_id_pairs(parsed: RunFileParams, kind: KindContext) -> tuple[Iterable[tuple[str, str, str]], str]:
    """(question text, query id, where it comes from) from the queries file, the named set or every set."""
    if parsed.queries is not None:
        from retrieval_pipeline.core.golden.beir import read_jsonl

        path = kind.resolve(parsed.queries)
        pairs = []
        for number, record in read_jsonl(path):
            query_id, text = id_text(record.get("_id")), record.get("text")
            if query_id is None or not isinstance(text, str):
                raise InvalidInputError('expected {"_id": ..., "text": ...}', source=f"{path}:{number}", key=kind.key)
            pairs.append((text, query_id, str(path)))
        return pairs, str(path)
    if kind.build.load_question_sets is None:
        message = "question texts need query ids: set question_set or queries (no question sets are configured)"
        raise kind.invalid(message, "question_set")
    registry = kind.build.load_question_sets()
    if parsed.question_set is None:
        sets, texts_from = list(registry.values()), "any configured question set"
    else:
        try:
            sets = [registry[parsed.question_set]]
        except UnknownIdentifierError as error:
            raise kind.invalid(str(error), "question_set") from None
        texts_from = f"the question set '{parsed.question_set}'"
    return [(q.question, q.id, f"set '{s.identifier}'") for s in sets for q in s.questions], texts_from
