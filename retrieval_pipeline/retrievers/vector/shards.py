"""A dense corpus encoded in shards: `shards: N` (or `shard_size: M`, N = ceil(documents / M)) slices
that separate processes, Dagster steps or machines encode into one shared vector cache.

A document's shard is a stable hash of its id (blake2b, modulo N), never its position, so an edited,
added or removed document changes its own shard only: each shard is cached under a key naming the
model and settings (as an unsharded encode's key does, without the corpus file), the shard's index,
N, and a fingerprint of that shard's ids and texts, so a changed corpus re-encodes only the shards
whose documents changed. `shard_size` picks N from the corpus's size: a corpus that grows past another
multiple of M is resharded whole, so `shards` suits a corpus that changes.

The search side assembles the shards and puts the rows back in corpus order, so ties rank as the
unsharded encode's do and the rankings equal its rankings.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from retrieval_pipeline.core.retrieval.kinds import KindContext, KindParams
from retrieval_pipeline.retrievers.encoders import checksum_of
from retrieval_pipeline.retrievers.vector.cache import DocumentVectors
from retrieval_pipeline.retrievers.vector.cache_location import joined

MAX_SHARDS = 10_000

EncodeInto = Callable[..., DocumentVectors]
"""Encodes (or loads) one folder of the vector cache from the documents a function reads: (folder,
read_documents, documents=the ids the folder must hold) -> DocumentVectors (cached_vectors)."""


class ShardParams(KindParams):
    shards: int | None = Field(None, ge=1, le=MAX_SHARDS)
    shard_size: int | None = Field(None, ge=1)

    def refuse_both(self, kind: KindContext) -> None:
        if self.shards is not None and self.shard_size is not None:
            raise kind.invalid("give shards or shard_size, not both", "shard_size")

    @property
    def sharded(self) -> bool:
        return self.shards is not None or self.shard_size is not None

    def shard_count(self, documents: int) -> int:
        """N: `shards`, or as many slices of `shard_size` documents as the corpus fills (at most MAX_SHARDS)."""
        if self.shards is not None:
            return self.shards
        return min(MAX_SHARDS, max(1, -(-documents // self.shard_size)))


def shard_of(document_id: str, count: int) -> int:
    """The document's shard: the same on every machine and in every process (Python's `hash` is not)."""
    digest = hashlib.blake2b(document_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count


@dataclass(frozen=True)
class ShardedCorpus:
    """A corpus's documents in N shards, each in document id order (so a reordered corpus changes no
    shard), with its folder in the vector cache."""

    ids: tuple[str, ...]
    texts: tuple[str, ...]
    members: tuple[tuple[int, ...], ...]  # each shard's corpus rows, by document id
    keys: tuple[str, ...]  # each shard's folder under the cache root: `<model and settings>/shard-i-of-N-<documents>`
    location: Path | str  # the cache root

    @classmethod
    def split(cls, ids: Sequence[str], texts: Sequence[str], count: int, base_key: str, location: Path | str):
        """`base_key` names the model and every setting that changes a vector; `location` is the cache root."""
        rows: list[list[int]] = [[] for _ in range(count)]
        for row, document_id in enumerate(ids):
            rows[shard_of(document_id, count)].append(row)
        for members in rows:
            members.sort(key=lambda row: ids[row])
        keys = tuple(
            f"{base_key}/shard-{index}-of-{count}-{_fingerprint([ids[r] for r in members], [texts[r] for r in members])}"
            for index, members in enumerate(rows)
        )
        return cls(tuple(ids), tuple(texts), tuple(tuple(members) for members in rows), keys, location)

    @property
    def count(self) -> int:
        return len(self.members)

    @property
    def index_version(self) -> str:
        """Changes when any shard's documents, the model or a setting does (the index-version sensor's cue)."""
        return checksum_of((), shards=list(self.keys))

    def documents(self, index: int) -> tuple[list[str], list[str]]:
        members = self.members[index]
        return [self.ids[row] for row in members], [self.texts[row] for row in members]

    def encode(self, index: int, encode_into: EncodeInto, split: Callable) -> DocumentVectors:
        """Shard `index` from the cache, encoded (and stored) when the cache lacks it; `split` turns its
        documents into the texts encoded (chunks, or the documents themselves). A shard no document
        hashed to is empty, with nothing cached."""
        if not self.members[index]:
            import numpy as np

            return DocumentVectors([], np.empty((0, 0), dtype=np.float32), True, 0, 0.0)
        folder = joined(self.location, *self.keys[index].split("/"))
        ids = self.documents(index)[0]  # a folder holding another shard's files is encoded again, not assembled
        return encode_into(folder, lambda: split(*self.documents(index)), documents=ids)

    def assembled(self, encode_into: EncodeInto, split: Callable) -> DocumentVectors:
        """Every shard (each encoded when missing), its rows put back in corpus order in one matrix."""
        import numpy as np

        shards = [self.encode(index, encode_into, split) for index in range(self.count)]
        order = np.argsort(np.concatenate([_corpus_rows(self, i, shard) for i, shard in enumerate(shards)]), kind="stable")
        destination = np.empty_like(order)
        destination[order] = np.arange(len(order))
        width = max(shard.vectors.shape[1] for shard in shards)
        vectors = np.empty((len(order), width), dtype=np.float32)
        ids: list[str] = [""] * len(order)
        start = 0
        for shard in shards:
            rows = destination[start : start + len(shard.document_ids)]
            if len(rows):
                vectors[rows] = shard.vectors
            for row, document_id in zip(rows.tolist(), shard.document_ids):
                ids[row] = document_id
            start += len(rows)
        return DocumentVectors(
            ids,
            vectors,
            all(shard.cache_hit for shard in shards),
            sum(shard.encoded for shard in shards),
            sum(shard.encoding_seconds for shard in shards),
        )


def _corpus_rows(corpus: ShardedCorpus, index: int, shard: DocumentVectors):
    """The corpus row of each of the shard's vectors: a chunk's is its document's (chunks keep the
    document's id and come in order), so a stable sort restores the unsharded order."""
    import numpy as np

    row_of = {corpus.ids[row]: row for row in reversed(corpus.members[index])}
    return np.array([row_of[document_id] for document_id in shard.document_ids], dtype=np.int64)


def _fingerprint(ids: Sequence[str], texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for document_id, text in zip(ids, texts):
        for value in (document_id, text):
            encoded = value.encode("utf-8")
            digest.update(len(encoded).to_bytes(8, "big") + encoded)
    return digest.hexdigest()[:16]
