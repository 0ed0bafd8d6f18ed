"""BM25 over a JSONL corpus (bm25s + PyStemmer): the baseline every other retriever is measured against.

Building an index costs seconds while a question costs microseconds, so an index is keyed by the corpus
file's checksum and the indexing parameters, kept in this process and persisted under the cache folder
for the next process. Heavy libraries are imported inside functions so the command line starts fast.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from retrieval_pipeline.core.base.durable import file_sha256, publish_folder
from retrieval_pipeline.core.base.errors import quoted
from retrieval_pipeline.core.base.extras import install_command
from retrieval_pipeline.core.retrieval.corpus import checked_corpus, read_corpus
from retrieval_pipeline.core.retrieval.kinds import KindContext, KindParams
from retrieval_pipeline.retrievers.base.chunking import Chunking, best_documents, chunk_report, most_chunks, split_documents
from retrieval_pipeline.retrievers.base.corpus import CorpusKind
from retrieval_pipeline.retrievers.base.process_cache import ProcessCache
from retrieval_pipeline.retrievers.lexical.backends import Backend, choose_backend, numba_usable, ranked_positions

IDS_FILE = "document_ids.json"


class LexicalParams(KindParams):
    corpus: str
    k1: float = Field(1.5, ge=0)
    b: float = Field(0.75, ge=0, le=1)
    method: Literal["lucene", "robertson", "atire", "bm25l", "bm25+"] = "lucene"
    stemmer: str | None = "english"
    stopwords: str | list[str] | None = "en"
    fields: list[Literal["title", "text"]] = Field(["title", "text"], min_length=1)
    min_score: float = 0.0
    backend: Backend = "auto"
    chunking: Chunking | None = None  # size and overlap in characters

    @field_validator("stemmer")
    @classmethod
    def _known_stemmer(cls, language: str | None) -> str | None:
        import Stemmer

        if language is not None and language not in Stemmer.algorithms():
            raise ValueError(f"unknown stemmer {quoted(language)}; PyStemmer offers {', '.join(Stemmer.algorithms())}")
        return language

    @field_validator("backend")
    @classmethod
    def _numba_installed(cls, backend: Backend) -> Backend:
        if backend == "numba" and not numba_usable():
            raise ValueError(f"numba is not installed ({install_command('fast')}); use 'auto' or 'numpy'")
        return backend

    @field_validator("stopwords")
    @classmethod
    def _known_stopwords(cls, stopwords: str | list[str] | None) -> str | list[str] | None:
        if isinstance(stopwords, str) and stopwords != "en":
            raise ValueError(f"{quoted(stopwords)} is not a stopword list; use 'en', a list of words, or null")
        return stopwords

    def tokenize(self, texts: Sequence[str], *, return_ids: bool):
        """Index and questions go through this one function, so a question's terms match the index's."""
        import bm25s
        import Stemmer

        stopwords = [word.lower() for word in self.stopwords] if isinstance(self.stopwords, list) else self.stopwords
        stemmer = Stemmer.Stemmer(self.stemmer) if self.stemmer else None  # per call: stemmers are not thread-safe
        return bm25s.tokenize(list(texts), stopwords=stopwords, stemmer=stemmer, return_ids=return_ids, show_progress=False)


@dataclass(frozen=True)
class _Index:
    bm25: Any
    document_ids: list[str]  # one per indexed text: with chunking, each chunk's document (repeated)


INDEXES: ProcessCache[_Index] = ProcessCache()


class LexicalKind(CorpusKind):
    """`kind: lexical`: the corpus file checked with the parameters; the index built or loaded once per process."""

    Params = LexicalParams

    def checked(self) -> None:
        checked_corpus(self.params.corpus, KindContext.of(self))

    def build(self) -> LexicalRetriever:
        params, name, context = self.params, self.name, self.context
        corpus = context.resolve(params.corpus)
        key = _index_key(corpus, params)
        index = INDEXES.get(key, lambda: _load_or_build(context.cache_dir / "lexical" / key, corpus, params, name))
        return LexicalRetriever(name, params, index, key)


class LexicalRetriever:
    """BM25 ranking of corpus documents; only documents scoring strictly above `min_score` are returned."""

    def __init__(self, identifier: str, params: LexicalParams, index: _Index, key: str):
        self.identifier = identifier
        self.params = params
        self.backend = choose_backend(params.backend, len(index.document_ids))
        self._index = index
        self._key = key
        self._most_chunks = most_chunks(index.document_ids)

    def index_version(self) -> str:
        return self._key

    def build_report(self) -> dict[str, int]:
        return chunk_report(self._index.document_ids)

    def retrieve(self, question: str, limit: int) -> list[str]:
        return self.retrieve_batch([question], limit)[0]

    def retrieve_batch(self, questions: Sequence[str], limit: int) -> list[list[str]]:
        """One tokenisation and one bm25s call for all questions; that is where BM25's speed comes from.
        With chunking, enough chunks are ranked to fill `limit` with distinct documents (see chunking)."""
        depth = min(limit * self._most_chunks, len(self._index.document_ids))
        if depth <= 0 or not questions:
            return [[] for _ in questions]
        tokens = self.params.tokenize(questions, return_ids=False)
        positions = ranked_positions(self._index.bm25, tokens, depth, self.backend, self.params.min_score)
        return [best_documents([self._index.document_ids[i] for i in row], limit) for row in positions]


def _index_key(corpus: Path, params: LexicalParams) -> str:
    """Everything that changes the index, and nothing else: `min_score` and `backend` act at query time.
    No chunking leaves `chunking` out, so the indexes built before it existed stay valid."""
    unchunked = {"chunking"} if params.chunking is None else set()
    recipe = {
        "corpus": file_sha256(corpus),
        "params": params.model_dump(exclude={"corpus", "min_score", "backend", *unchunked}),
        "bm25s": version("bm25s"),
    }
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]


def _load_or_build(folder: Path, corpus: Path, params: LexicalParams, identifier: str) -> _Index:
    """A cached index that cannot be used, whatever the loader raises (an empty file gives EOFError, a
    damaged one ValueError or a pickle error), is deleted and rebuilt: the cache is only ever a shortcut.
    A new index is published whole (see `publish_folder`)."""
    cached = _load_cached(folder)
    if cached is not None:
        return cached
    document_ids, texts = read_corpus(corpus, params.fields, f"retrievers.{identifier}")
    if params.chunking is not None:
        document_ids, texts = split_documents(document_ids, texts, params.chunking)
    index = _Index(_build_index(texts, params), document_ids)

    def fill(staging: Path) -> None:
        index.bm25.save(staging, show_progress=False)
        (staging / IDS_FILE).write_text(json.dumps(document_ids), encoding="utf-8")

    publish_folder(folder, fill)
    return index


def _load_cached(folder: Path) -> _Index | None:
    import bm25s

    if not folder.is_dir():
        return None
    try:
        bm25 = bm25s.BM25.load(folder, show_progress=False)
        document_ids = json.loads((folder / IDS_FILE).read_text(encoding="utf-8"))
        if not isinstance(document_ids, list) or len(document_ids) != bm25.scores["num_docs"]:
            raise ValueError(f"{IDS_FILE} does not match the index")
        return _Index(bm25, document_ids)
    except Exception:  # noqa: BLE001 - any damage at all means: rebuild (see _load_or_build)
        shutil.rmtree(folder, ignore_errors=True)
        return None


def _build_index(texts: list[str], params: LexicalParams):
    import bm25s

    bm25 = bm25s.BM25(k1=params.k1, b=params.b, method=params.method)
    bm25.index(params.tokenize(texts, return_ids=True), show_progress=False)
    return bm25
