"""Document vectors computed once: cached under the cache folder as float32 `.npy`, memory-mapped on reuse.
The folder may be an fsspec URI shared by several machines (cache_location.py).

The caller's key names everything that changes a vector (the corpus, the model, the settings), so a
nightly with both unchanged encodes nothing but its questions. A cached folder that cannot be used is
deleted and encoded again, and a new one is published whole (`publish_folder`), as the BM25 index is.

A key says which vectors a folder should hold, not that it holds them: a disk, a copy or a person may
have zeroed or replaced the bytes since, and such vectors would rank silently wrong for ever. So the
vectors carry a CRC-32 of their bytes, checked on every load (about 3 ms for SciFact's 5,183 x 384:
three times the rest of the load, a sixteenth of one 300-question search, which reads the same pages),
and a matrix of another width than the encoder's is encoded again rather than failing every question's
matrix product. A shard's folder must hold that shard's documents (its key names them, but a copy may
have put another shard's files there, whole and with a checksum that holds). A folder refused for any
of these costs one warning naming it and why, and is encoded again.
"""

from __future__ import annotations

import json
import logging
import shutil
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrieval_pipeline.core.base.durable import publish_folder
from retrieval_pipeline.retrievers.vector.cache_location import downloaded, local_folder, shown, uploaded
from retrieval_pipeline.retrievers.vector.encoding_progress import EncodingProgress

LOG = logging.getLogger(__name__)

VECTORS_FILE = "vectors.npy"
IDS_FILE = "document_ids.json"
CHECKSUM_FILE = "vectors.crc32"
FILES = (VECTORS_FILE, IDS_FILE, CHECKSUM_FILE)  # in upload order: the checksum, which vouches for the rest, last


@dataclass(frozen=True)
class DocumentVectors:
    document_ids: list[str]
    vectors: Any  # float32 (documents, dimension): a memory map when read from the cache
    cache_hit: bool
    encoded: int  # texts encoded to obtain them: 0 on a cache hit
    encoding_seconds: float


def cached_vectors(
    location: Path | str,
    read_documents: Callable[[], tuple[list[str], list[str]]],
    encode: Callable[[Sequence[str]], Any],
    progress: Callable[[int], EncodingProgress],
    texts_at_once: int = 1,
    width: Callable[[], int | None] = lambda: None,
    documents: Sequence[str] | None = None,
) -> DocumentVectors:
    """`read_documents` gives ids and texts, read only when the cache misses; `progress` makes the
    progress of that many texts. Texts go to `encode` `texts_at_once` at a time (an encoder's batch times its
    concurrency), so an endpoint still gets full batches, as many in flight as it allows, longest first:
    a batch of texts of about one length pads little (1.23 times the documents per CPU-second on the
    demo corpus with MiniLM, identical vectors; benchmarks/bench_shards.py). `width` is the
    encoder's when it knows it without asking a service; a cached matrix of another width is damaged.
    `documents` are the ids the folder must hold, in order (a shard's), where known without reading.
    `location` is a local folder or an fsspec URI (cache_location.py); a remote one that cannot be read
    is neither read nor written (one warning), the vectors encoded in memory."""
    import numpy as np

    local = local_folder(location)
    folder = local if local is not None else downloaded(str(location), FILES)
    if folder is not None:
        cached = _verified(folder, width, documents, shown(location))
        if cached is not None:
            return cached
    document_ids, texts = read_documents()
    told = progress(len(texts))
    order = sorted(range(len(texts)), key=lambda row: -len(texts[row]))
    parts = []
    for start in range(0, len(texts), texts_at_once):
        parts.append(encode([texts[row] for row in order[start : start + texts_at_once]]))
        told.advance(min(start + texts_at_once, len(texts)))
    vectors = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
    vectors[order] = np.concatenate(parts)

    def fill(staging: Path) -> None:
        np.save(staging / VECTORS_FILE, vectors)
        (staging / IDS_FILE).write_text(json.dumps(document_ids), encoding="utf-8")
        (staging / CHECKSUM_FILE).write_text(str(vectors_checksum(vectors)), encoding="utf-8")

    if folder is not None:
        publish_folder(folder, fill)
        if local is None:
            uploaded(folder, str(location), FILES)
    return DocumentVectors(document_ids, vectors, False, len(texts), told.seconds())


def vectors_checksum(vectors) -> int:
    """CRC-32 of the matrix's bytes: a fast check against damage, not against anyone forging vectors
    (the saved HNSW graph names the vectors it was built from by it too)."""
    import numpy as np

    return zlib.crc32(np.ascontiguousarray(vectors).data)


class _Refused(ValueError):
    """A cached folder that reads but does not hold what its key names."""


def _verified(
    folder: Path, width: Callable[[], int | None], documents: Sequence[str] | None, name: str
) -> DocumentVectors | None:
    """The folder's vectors when they verify; else None, and a folder that held something is deleted with
    one warning naming it (`name`: the location, never a download's temporary folder) and why."""
    if not folder.is_dir():
        return None
    if not any((folder / file).exists() for file in FILES):  # nothing cached: a miss, not damage
        shutil.rmtree(folder, ignore_errors=True)
        return None
    try:
        return _load(folder, width, documents)
    except Exception as error:  # noqa: BLE001 - any damage at all means: encode again
        shutil.rmtree(folder, ignore_errors=True)
        cause = str(error) if isinstance(error, _Refused) else f"it cannot be read: {type(error).__name__}"
        LOG.warning("vector cache %s not used (%s): encoded again", name, cause)
        return None


def _load(folder: Path, width: Callable[[], int | None], documents: Sequence[str] | None) -> DocumentVectors:
    import numpy as np

    if not (folder / CHECKSUM_FILE).is_file():
        raise _Refused(f"no {CHECKSUM_FILE}: written incompletely")
    vectors = np.load(folder / VECTORS_FILE, mmap_mode="r", allow_pickle=False)
    document_ids = json.loads((folder / IDS_FILE).read_text(encoding="utf-8"))
    if vectors.dtype != np.float32 or vectors.ndim != 2 or not isinstance(document_ids, list):
        raise _Refused(f"{VECTORS_FILE} is not a float32 matrix")
    if len(document_ids) != vectors.shape[0]:
        raise _Refused(f"{IDS_FILE} does not match {VECTORS_FILE}")
    if documents is not None and list(dict.fromkeys(document_ids)) != list(dict.fromkeys(documents)):
        raise _Refused("it holds other documents than its key names")  # chunks repeat their document's id
    if int((folder / CHECKSUM_FILE).read_text(encoding="utf-8")) != vectors_checksum(vectors):
        raise _Refused(f"{VECTORS_FILE} does not match its checksum")
    if width() not in (None, vectors.shape[1]):
        raise _Refused(f"{VECTORS_FILE} is not as wide as the encoder's vectors")
    return DocumentVectors(document_ids, vectors, True, 0, 0.0)
