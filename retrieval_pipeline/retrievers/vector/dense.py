"""Dense retrieval over a JSONL corpus: an embedding model encodes documents and questions, exact search
ranks by inner product (cosine with `normalize`), so an embedding swap is one configuration entry. With
`index: {kind: hnsw}` an HNSW graph searches instead, and every run says it was approximate (ann_index.py).

Encoding a corpus is the cost: document vectors are cached (see vector/cache.py) under a key naming the
corpus bytes, the model bytes and every setting that changes a vector, so a nightly with the same corpus
and model encodes only its questions. Heavy libraries are imported inside functions (see encoders).
Instead of a local `model`, `encoder` names an embeddings endpoint or a function (encoders/openai.py,
encoders/callable.py); the model's identity in the key is then the configured one. With `shards`
(or `shard_size`) the corpus is encoded in slices cached one by one (vector/shards.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from retrieval_pipeline.core.retrieval.approximation import Approximation
from retrieval_pipeline.core.retrieval.corpus import read_corpus
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.core.retrieval.retriever import BuildContext, RetrieverFault, document_id_from_chunk
from retrieval_pipeline.retrievers.base.chunking import best_documents, chunk_report, most_chunks, split_documents
from retrieval_pipeline.retrievers.base.corpus import CorpusKind
from retrieval_pipeline.retrievers.base.process_cache import ProcessCache
from retrieval_pipeline.retrievers.encoders import Encoder, checksum_of
from retrieval_pipeline.retrievers.encoders.query_encoder import opened_encoder
from retrieval_pipeline.retrievers.vector.ann_index import HnswIndex, HnswSearch, graph_report, hnsw_search, stated_approximation
from retrieval_pipeline.retrievers.vector.cache import DocumentVectors, cached_vectors
from retrieval_pipeline.retrievers.vector.cache_location import joined
from retrieval_pipeline.retrievers.vector.dense_params import DenseParams, checked_params
from retrieval_pipeline.retrievers.vector.encoding_progress import EncodingProgress
from retrieval_pipeline.retrievers.vector.exact_search import top_positions
from retrieval_pipeline.retrievers.vector.shards import ShardedCorpus

VECTORS: ProcessCache[DocumentVectors] = ProcessCache()


class DenseKind(CorpusKind):
    """`kind: dense`: the parameters, the corpus and model files, and the runtime installed, checked with
    nothing loaded; the model opened and the corpus encoded (or its vectors found cached) when built."""

    Params = DenseParams
    embeds_questions = True
    shards_document_vectors = True

    def checked(self) -> None:
        self.encoding, self.tokenizer = checked_params(self.params, self._bound)

    def build(self) -> DenseRetriever:
        settings, kind = self.params, self._bound
        encoder = opened_encoder(settings, self.encoding, kind)
        encode_into, split = _encode_into(settings, encoder, kind), partial(_split, settings, self.tokenizer)
        if settings.sharded:
            sharded = _sharded(kind, settings, encoder)
            key = sharded.index_version
            vectors = VECTORS.get(key, lambda: sharded.assembled(encode_into, split))
        else:
            corpus = kind.resolve(settings.corpus)
            key = checksum_of([corpus], vectors=encoder.fingerprint, **_recipe(settings))
            folder = joined(kind.build.vector_location, key)
            vectors = VECTORS.get(
                key, lambda: encode_into(folder, lambda: split(*read_corpus(corpus, settings.fields, kind.key)))
            )
        graph = None
        if isinstance(settings.index, HnswIndex):
            folder = kind.build.cache_dir / "dense"
            graph = hnsw_search(settings.index, vectors.vectors, key, settings.normalize, folder, kind.build.report)
        return DenseRetriever(self.name, settings, encoder, vectors, key, graph)

    def question_encoder(self) -> Callable[[Sequence[str]], Any]:
        """Texts embedded as this retriever embeds a question (its model, settings and query prefix), with
        no corpus encoded: what `coverage` compares logged queries and golden questions with."""
        encoder, prefix = opened_encoder(self.params, self.encoding, self._bound), self.params.query_prefix
        return lambda texts: encoder.encode([prefix + text for text in texts])

    @classmethod
    def shard_count(cls, name: str, raw: Mapping[str, Any], context: BuildContext) -> int | None:
        """The configured number of shards (None: not sharded), with no model loaded: what the Dagster
        partitions are made of when the definitions load, so a retriever refused for a missing model still
        has its partitions; `shard_size` counts the corpus's documents, with the entry checked whole."""
        settings = cls.validated(name, raw, context)
        settings.refuse_both(KindContext(name, context, cls.section))
        if not settings.sharded:
            return None
        documents = 0 if settings.shards else len(cls.parse(name, raw, context).corpus())
        return settings.shard_count(documents)

    def encode_shard(self, index: int) -> tuple[ShardedCorpus, DocumentVectors]:
        """One shard's vectors, from the cache or encoded into it (one Dagster step per shard:
        dagster_layer/document_vectors.py), with the corpus's shards."""
        settings, kind = self.params, self._bound
        encoder = opened_encoder(settings, self.encoding, kind)
        sharded = _sharded(kind, settings, encoder)
        return sharded, sharded.encode(index, _encode_into(settings, encoder, kind), partial(_split, settings, self.tokenizer))

    @property
    def _bound(self) -> KindContext:
        return KindContext.of(self)


class DenseRetriever:
    """The documents whose vectors are nearest a question's, best first; ties in corpus order."""

    def __init__(
        self,
        identifier: str,
        params: DenseParams,
        encoder: Encoder,
        vectors: DocumentVectors,
        key: str,
        graph: HnswSearch | None = None,
    ):
        self.identifier = identifier
        self.params = params
        self._encoder = encoder
        self._vectors = vectors
        self._key = key
        self._graph = graph
        self._most_chunks = most_chunks(vectors.document_ids)
        if hasattr(encoder, "fail_fast_after"):  # an endpoint stops the run as the HTTP kind does
            self.fail_fast_after = encoder.fail_fast_after

    def retries(self) -> dict[str, int]:
        """The retries its encoder made, when the encoder is a service that retries (`CountsRetries`)."""
        counted = getattr(self._encoder, "retries", None)
        return counted() if counted is not None else {}

    def index_version(self) -> str:
        return self._key

    def build_report(self) -> dict[str, str | int | float | bool]:
        vectors = self._vectors
        return {
            **chunk_report(vectors.document_ids),
            "dimension": int(vectors.vectors.shape[1]),
            "runtime": self._encoder.runtime,
            "model_fingerprint": self._encoder.model_fingerprint,
            **({"providers": ", ".join(self._encoder.providers)} if hasattr(self._encoder, "providers") else {}),
            "vector_cache_hit": vectors.cache_hit,
            "documents_encoded": vectors.encoded,
            "encoding_seconds": round(vectors.encoding_seconds, 3),
            **graph_report(self._graph),
        }

    def retrieve(self, question: str, limit: int) -> list[str]:
        return self.retrieve_batch([question], limit)[0]

    def retrieve_batch(self, questions: Sequence[str], limit: int) -> list[list[str]]:
        """One encoding and one search for all questions. With chunking, enough chunks are ranked to fill
        `limit` with distinct documents (see chunking)."""
        ids = self._vectors.document_ids
        if min(limit, len(ids)) <= 0 or not questions:
            return [[] for _ in questions]
        queries, depth = self._queries(questions), limit * self._most_chunks
        if self._graph is None:
            positions = top_positions(queries, self._vectors.vectors, depth).tolist()
        else:
            positions = self._graph.top_positions(queries, depth)
        rankings = [[ids[i] for i in row] for row in positions]
        separator = self.params.chunk_separator
        if separator is not None:
            rankings = [[document_id_from_chunk(i, separator) for i in row] for row in rankings]
        return rankings if self.params.chunking is None else [best_documents(row, limit) for row in rankings]

    def approximation(self, questions: Sequence[str]) -> Approximation | None:
        """None with exact search; through the graph, its top-10 overlap with exact search on a sample."""
        return None if self._graph is None else stated_approximation(self._graph, questions, self._queries, self._vectors.vectors)

    def _queries(self, questions: Sequence[str]):
        queries = self._encoder.encode([self.params.query_prefix + question for question in questions])
        if queries.shape[1] != self._vectors.vectors.shape[1]:  # the model behind an endpoint's name changed
            raise RetrieverFault(
                f"questions are encoded as vectors of width {queries.shape[1]}, the cached documents' are "
                f"{self._vectors.vectors.shape[1]} wide: the model behind the encoder changed; change encoder.version "
                "so the documents are encoded again"
            )
        return queries


def _recipe(settings: DenseParams) -> dict[str, Any]:
    """The settings that change a document vector besides the encoder's. The query prefix is left out: it
    changes no document vector; no chunking keeps the keys it had before."""
    return settings.model_dump(include={"fields", "document_prefix", *(["chunking"] if settings.chunking else [])})


def _sharded(kind: KindContext, settings: DenseParams, encoder: Encoder) -> ShardedCorpus:
    """The corpus in its shards, each keyed by the model and settings (not the corpus file) and its documents."""
    ids, texts = read_corpus(kind.resolve(settings.corpus), settings.fields, kind.key)
    base_key = checksum_of((), vectors=encoder.fingerprint, **_recipe(settings))
    count = settings.shard_count(len(set(ids)))  # as `shard_count` counts them, so the Dagster partitions agree
    return ShardedCorpus.split(ids, texts, count, base_key, kind.build.vector_location)


def _split(settings: DenseParams, tokenizer: Path | None, ids: list[str], texts: list[str]) -> tuple[list[str], list[str]]:
    """The texts encoded for these documents: the documents or their chunks, each behind the document prefix."""
    if settings.chunking is not None:
        ids, texts = split_documents(ids, texts, settings.chunking, tokenizer)
    return ids, [settings.document_prefix + text for text in texts]


def _encode_into(settings: DenseParams, encoder: Encoder, kind: KindContext):
    """cached_vectors bound to this encoder: (folder, read_documents) -> DocumentVectors (shards.EncodeInto)."""
    noun = "documents" if settings.chunking is None else "chunks"
    return partial(
        cached_vectors,
        encode=encoder.encode,
        progress=partial(EncodingProgress, noun=noun, report=kind.build.report),
        texts_at_once=settings.batch_size * encoder.concurrency,
        width=encoder.dimension,
    )
