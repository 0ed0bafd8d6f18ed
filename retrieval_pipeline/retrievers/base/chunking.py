"""Documents split into chunks for `lexical` and `dense`, and rankings of chunks turned back into documents.

A long document's answer may sit in one passage that a whole-document score (BM25's length
normalisation, an embedding model cutting at `max_length`) dilutes or never sees. With `chunking` the
retriever indexes passages instead and a document ranks where its best passage ranks. Labels are
documents, so chunks never leave the retriever: every chunk carries its document's id, and a ranking of
chunks keeps each document's first (best) chunk only.

Splitting is semantic-text-splitter's (Rust, sentence boundaries kept): chunks of at most `size`
characters, or `size` tokens of the model's own `tokenizer.json` for an embedding model, so a chunk
fits what the model reads.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Chunking(BaseModel):
    """`size` characters (lexical) or tokens (dense) per chunk at most, `overlap` of them shared by neighbours."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    size: int = Field(ge=1)
    overlap: int = Field(0, ge=0)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> Chunking:
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


def split_documents(
    document_ids: Sequence[str], texts: Sequence[str], chunking: Chunking, tokenizer: Path | None = None
) -> tuple[list[str], list[str]]:
    """Each chunk's document id and text, documents in corpus order. A document with no text keeps one
    (empty) chunk, so every document stays in the index and the counts stay honest."""
    from semantic_text_splitter import TextSplitter

    if tokenizer is None:
        splitter = TextSplitter(chunking.size, chunking.overlap)
    else:
        splitter = TextSplitter.from_huggingface_tokenizer(_counting_tokenizer(tokenizer), chunking.size, chunking.overlap)
    chunk_ids: list[str] = []
    chunk_texts: list[str] = []
    for document_id, chunks in zip(document_ids, splitter.chunk_all(list(texts))):
        chunks = chunks or [""]
        chunk_ids.extend([document_id] * len(chunks))
        chunk_texts.extend(chunks)
    return chunk_ids, chunk_texts


def special_tokens(tokenizer: Path) -> int:
    """The tokens the tokenizer adds around every text ([CLS] and [SEP] on BERT): chunks are counted
    without them, the model reads them too, so `max_length` must hold a chunk and them."""
    return len(_counting_tokenizer(tokenizer).encode("").ids)


def _counting_tokenizer(path: Path):
    """The file's tokenizer without its own truncation and padding, which would count every text as the
    same length (MiniLM's `tokenizer.json` pads and cuts at 128) and so size chunks wrongly."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def most_chunks(chunk_ids: Sequence[str]) -> int:
    """The largest number of chunks of one document: asking `limit` times that many chunks is sure to
    reach `limit` distinct documents whatever the ranking (counted once, when the index is loaded)."""
    return Counter(chunk_ids).most_common(1)[0][1] if chunk_ids else 1


def best_documents(ranked_ids: Sequence[str], limit: int) -> list[str]:
    """A ranking of chunks (by their documents' ids) as documents: each at its best chunk's place."""
    return list(dict.fromkeys(ranked_ids))[:limit]


def chunk_report(chunk_ids: Sequence[str]) -> dict[str, int]:
    """What the build report says of the index: its documents and the chunks they were split into."""
    return {"documents": len(set(chunk_ids)), "chunks": len(chunk_ids)}
