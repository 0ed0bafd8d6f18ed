"""The dense kind's parameters, each checked once, whether the retriever is only checked or then built:
the corpus and vector cache, the encoder (a local model or a named one), the index and the chunking,
which sizes chunks in the local model's own tokens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.extras import install_command, missing_modules
from retrieval_pipeline.core.retrieval.corpus import checked_corpus
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.retrievers.base.chunking import Chunking, special_tokens
from retrieval_pipeline.retrievers.encoders import EncoderConfigError, EncoderSettings
from retrieval_pipeline.retrievers.encoders.onnx import loaded
from retrieval_pipeline.retrievers.encoders.query_encoder import QueryEncoderParams, checked_encoder, refused
from retrieval_pipeline.retrievers.vector.ann_index import ExactIndex, HnswIndex, IndexParams
from retrieval_pipeline.retrievers.vector.cache_location import unusable
from retrieval_pipeline.retrievers.vector.shards import ShardParams


class DenseParams(QueryEncoderParams, ShardParams):
    corpus: str
    fields: list[Literal["title", "text"]] = Field(["title", "text"], min_length=1)
    document_prefix: str = ""
    chunk_separator: str | None = Field(None, min_length=1)
    chunking: Chunking | None = None  # size and overlap in tokens of the model's tokenizer
    index: IndexParams = Field(ExactIndex(), discriminator="kind")  # exact, or hnsw (ann_index.py)


def checked_params(settings: DenseParams, kind: KindContext) -> tuple[EncoderSettings | None, Path | None]:
    """Across the parameters: the local encoder's settings (none when `encoder` names the model) and the
    tokenizer chunks are sized with (none without chunking), each checked once whether only checked or then built."""
    settings.refuse_both(kind)
    if unusable(kind.build.vector_location):
        raise InvalidInputError(unusable(kind.build.vector_location), source=kind.build.source, key="vector_cache")
    checked_corpus(settings.corpus, kind)
    encoding = checked_encoder(settings, kind)
    if isinstance(settings.index, HnswIndex) and missing_modules(("usearch",)):
        raise kind.invalid(f"index kind hnsw needs usearch, not installed: {install_command('dense')}", "index.kind")
    if settings.chunking is None:
        return encoding, None
    if encoding is None:
        raise kind.invalid("chunking sizes chunks in a local model's tokens: give model, not encoder", "chunking")
    try:
        return encoding, _chunk_tokenizer(settings, encoding)
    except EncoderConfigError as error:
        raise refused(error, kind) from None


def _chunk_tokenizer(settings: DenseParams, encoding: EncoderSettings) -> Path:
    """Chunks are sized in the model's own tokens, so each fits `max_length` with the special tokens."""
    folder = Path(encoding.model)
    tokenizer = encoding.tokenizer or (folder / "tokenizer.json" if folder.is_dir() else None)
    if tokenizer is None or not tokenizer.is_file():
        raise EncoderConfigError("chunking", "chunking sizes chunks in the model's tokens: the model has no tokenizer.json")
    added = loaded("tokenizer", str(tokenizer), lambda path: special_tokens(Path(path)))
    largest = settings.max_length - added
    if settings.chunking.size > largest:
        raise EncoderConfigError(
            "chunking.size",
            f"{settings.chunking.size} tokens and the tokenizer's {added} special tokens exceed max_length "
            f"{settings.max_length}: at most {largest}",
        )
    return tokenizer
