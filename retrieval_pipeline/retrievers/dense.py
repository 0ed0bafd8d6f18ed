"""Dense retrieval over a JSONL corpus: an embedding model encodes documents and questions, exact search
ranks by inner product (cosine with `normalize`), so an embedding swap is one configuration entry.

Encoding a corpus is the cost: document vectors are cached (see vector_cache) under a key naming the
corpus bytes, the model bytes and every setting that changes a vector, so a nightly with the same corpus
and model encodes only its questions. Heavy libraries are imported inside functions (see encoders).
Instead of a local `model`, `encoder` names an embeddings endpoint or a function (encoders/openai.py,
encoders/callable.py); the model's identity in the key is then the configured one.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.corpus import read_corpus, read_document_ids, read_document_texts
from retrieval_pipeline.core.retrieval.retriever import BuildContext, RetrieverParams, document_id_from_chunk
from retrieval_pipeline.retrievers.chunking import Chunking, best_documents, chunk_report, most_chunks, split_documents
from retrieval_pipeline.retrievers.encoders import (
    Encoder,
    EncoderConfigError,
    EncoderSettings,
    Pooling,
    checksum_of,
    encoder_settings,
    open_encoder,
)
from retrieval_pipeline.retrievers.encoders.callable import CallableEncoderParams
from retrieval_pipeline.retrievers.encoders.openai import OpenAIEncoderParams
from retrieval_pipeline.retrievers.exact_search import top_positions
from retrieval_pipeline.retrievers.package_files import PackageFile
from retrieval_pipeline.retrievers.vector_cache import DocumentVectors, cached_vectors


class DenseParams(RetrieverParams):
    corpus: str
    fields: list[Literal["title", "text"]] = Field(["title", "text"], min_length=1)
    model: str | PackageFile | None = None
    encoder: OpenAIEncoderParams | CallableEncoderParams | None = Field(None, discriminator="kind")
    tokenizer: str | PackageFile | None = None
    runtime: Literal["auto", "onnx", "sentence-transformers"] = "auto"
    output: int | str | None = None
    max_length: int = Field(256, ge=1, le=8192)
    pooling: Pooling = "mean"
    normalize: bool = True
    query_prefix: str = ""
    document_prefix: str = ""
    batch_size: int = Field(32, ge=1, le=4096)
    chunk_separator: str | None = Field(None, min_length=1)
    chunking: Chunking | None = None  # size and overlap in tokens of the model's tokenizer


LOCAL_MODEL_ONLY = ("tokenizer", "runtime", "output", "max_length", "pooling")
_VECTORS: dict[str, DocumentVectors] = {}
_LOCK = threading.Lock()


class DenseRetriever:
    """The documents whose vectors are nearest a question's, best first; ties in corpus order."""

    def __init__(self, identifier: str, params: DenseParams, encoder: Encoder, vectors: DocumentVectors, key: str):
        self.identifier = identifier
        self.params = params
        self._encoder = encoder
        self._vectors = vectors
        self._key = key
        self._most_chunks = most_chunks(vectors.document_ids)
        if hasattr(encoder, "fail_fast_after"):  # an endpoint stops the run as the HTTP kind does
            self.fail_fast_after = encoder.fail_fast_after

    @classmethod
    def check_config(
        cls, identifier: str, params: Mapping[str, Any], context: BuildContext
    ) -> tuple[DenseParams, EncoderSettings | None]:
        """The parameters, the corpus and model files, and the runtime installed, with nothing loaded;
        no local settings when `encoder` names the model."""
        settings = DenseParams.parse(identifier, params, context)
        if not context.resolve(settings.corpus).is_file():
            error = EncoderConfigError("corpus", f"corpus file {context.resolve(settings.corpus)} does not exist")
            raise _refused(error, identifier, context)
        if (settings.model is None) == (settings.encoder is None):
            error = EncoderConfigError(
                "encoder", "give exactly one of model (a local model) and encoder (an endpoint or a function)"
            )
            raise _refused(error, identifier, context)
        if settings.encoder is not None:
            local_only = [name for name in LOCAL_MODEL_ONLY if name in settings.model_fields_set]
            if local_only:
                error = EncoderConfigError(local_only[0], f"{local_only[0]} applies to a local model, not to an encoder")
                raise _refused(error, identifier, context)
            if settings.chunking is not None:
                error = EncoderConfigError("chunking", "chunking sizes chunks in a local model's tokens: give model, not encoder")
                raise _refused(error, identifier, context)
            if isinstance(settings.encoder, CallableEncoderParams):
                settings.encoder.resolve(partial(context.invalid, identifier))
            return settings, None
        try:
            local = _located(settings.model, "model", context)
            encoding = encoder_settings(
                local if local.exists() else settings.model,
                _located(settings.tokenizer, "tokenizer", context) if settings.tokenizer else None,
                settings.runtime,
                **settings.model_dump(include={"max_length", "pooling", "normalize", "batch_size", "output"}),
            )
            if settings.chunking is not None:
                _chunk_tokenizer(settings, encoding)
        except EncoderConfigError as error:
            raise _refused(error, identifier, context) from None
        return settings, encoding

    @classmethod
    def from_config(cls, identifier: str, params: Mapping[str, Any], context: BuildContext) -> DenseRetriever:
        settings, encoding = cls.check_config(identifier, params, context)
        corpus = context.resolve(settings.corpus)
        if encoding is None:
            encoder = settings.encoder.open(
                identifier, settings.normalize, settings.batch_size, partial(context.invalid, identifier)
            )
        else:
            try:
                encoder = open_encoder(encoding)
            except EncoderConfigError as error:  # a model file the runtime cannot load, an output it lacks
                raise _refused(error, identifier, context) from None
        # The query prefix is left out: it changes no document vector; no chunking keeps the keys it had before.
        recipe = settings.model_dump(include={"fields", "document_prefix", *(["chunking"] if settings.chunking else [])})
        key = checksum_of([corpus], vectors=encoder.fingerprint, **recipe)

        def read_documents() -> tuple[list[str], list[str]]:
            ids, texts = read_corpus(corpus, settings.fields, f"retrievers.{identifier}")
            if settings.chunking is not None:
                ids, texts = split_documents(ids, texts, settings.chunking, _chunk_tokenizer(settings, encoding))
            return ids, [settings.document_prefix + text for text in texts]

        with _LOCK:
            if key not in _VECTORS:
                folder = context.cache_dir / "dense" / key
                _VECTORS[key] = cached_vectors(folder, read_documents, encoder.encode, context.report, settings.batch_size)
            return cls(identifier, settings, encoder, _VECTORS[key], key)

    @classmethod
    def corpus_document_ids(cls, identifier: str, params: Mapping[str, Any], context: BuildContext) -> frozenset[str]:
        settings, _ = cls.check_config(identifier, params, context)
        return read_document_ids(context.resolve(settings.corpus), f"retrievers.{identifier}")

    @classmethod
    def corpus_texts(
        cls, identifier: str, params: Mapping[str, Any], context: BuildContext, wanted: Collection[str]
    ) -> dict[str, tuple[str, str]]:
        settings, _ = cls.check_config(identifier, params, context)
        return read_document_texts(context.resolve(settings.corpus), wanted, f"retrievers.{identifier}")

    def index_version(self) -> str:
        return self._key

    def build_report(self) -> dict[str, str | int | float | bool]:
        vectors = self._vectors
        return {
            **chunk_report(vectors.document_ids),
            "dimension": int(vectors.vectors.shape[1]),
            "runtime": self._encoder.runtime,
            "model_fingerprint": self._encoder.model_fingerprint,
            "vector_cache_hit": vectors.cache_hit,
            "documents_encoded": vectors.encoded,
            "encoding_seconds": round(vectors.encoding_seconds, 3),
        }

    def retrieve(self, question: str, limit: int) -> list[str]:
        return self.retrieve_batch([question], limit)[0]

    def retrieve_batch(self, questions: Sequence[str], limit: int) -> list[list[str]]:
        """One encoding and one search for all questions. With chunking, enough chunks are ranked to fill
        `limit` with distinct documents (see chunking)."""
        ids = self._vectors.document_ids
        if min(limit, len(ids)) <= 0 or not questions:
            return [[] for _ in questions]
        queries = self._encoder.encode([self.params.query_prefix + question for question in questions])
        positions = top_positions(queries, self._vectors.vectors, limit * self._most_chunks).tolist()
        rankings = [[ids[i] for i in row] for row in positions]
        separator = self.params.chunk_separator
        if separator is not None:
            rankings = [[document_id_from_chunk(i, separator) for i in row] for row in rankings]
        return rankings if self.params.chunking is None else [best_documents(row, limit) for row in rankings]


def _refused(error: EncoderConfigError, identifier: str, context: BuildContext) -> InvalidInputError:
    return InvalidInputError(str(error), source=context.source, key=f"retrievers.{identifier}", field=error.field)


def _located(value: str | PackageFile, field: str, context: BuildContext) -> Path:
    """A path relative to the configuration, or a file of an installed package (see package_files)."""
    if isinstance(value, str):
        return context.resolve(value)
    try:
        return value.locate()
    except FileNotFoundError as error:
        raise EncoderConfigError(field, str(error)) from None


def _chunk_tokenizer(settings: DenseParams, encoding: EncoderSettings) -> Path:
    """Chunks are sized in the model's own tokens, so they fit `max_length` (special tokens aside)."""
    folder = Path(encoding.model)
    tokenizer = encoding.tokenizer or (folder / "tokenizer.json" if folder.is_dir() else None)
    if tokenizer is None or not tokenizer.is_file():
        raise EncoderConfigError("chunking", "chunking sizes chunks in the model's tokens: the model has no tokenizer.json")
    if settings.chunking.size > settings.max_length:
        raise EncoderConfigError(
            "chunking.size", f"{settings.chunking.size} tokens exceed max_length {settings.max_length}: chunks would be cut"
        )
    return tokenizer
