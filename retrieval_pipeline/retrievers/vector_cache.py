"""Document vectors computed once: cached under the cache folder as float32 `.npy`, memory-mapped on reuse.

The caller's key names everything that changes a vector (the corpus, the model, the settings), so a
nightly with both unchanged encodes nothing but its questions. A cached folder that cannot be used is
deleted and encoded again, and a new one is published whole (`publish_folder`), as the BM25 index is.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrieval_pipeline.core.base.durable import publish_folder

VECTORS_FILE = "vectors.npy"
IDS_FILE = "document_ids.json"
PROGRESS_STEPS = 20  # at most this many progress messages per corpus


@dataclass(frozen=True)
class DocumentVectors:
    document_ids: list[str]
    vectors: Any  # float32 (documents, dimension): a memory map when read from the cache
    cache_hit: bool
    encoded: int  # texts encoded to obtain them: 0 on a cache hit
    encoding_seconds: float


def cached_vectors(
    folder: Path,
    read_documents: Callable[[], tuple[list[str], list[str]]],
    encode: Callable[[Sequence[str]], Any],
    progress: Callable[[str], None],
    texts_at_once: int = 1,
) -> DocumentVectors:
    """`read_documents` gives ids and texts, read only when the cache misses. Progress steps are whole
    multiples of `texts_at_once` (the texts an encoder works on at once: its batch times its concurrency),
    so an endpoint still gets full batches, as many in flight as it allows."""
    import numpy as np

    cached = _load(folder)
    if cached is not None:
        return cached
    document_ids, texts = read_documents()
    started = time.perf_counter()
    step = texts_at_once * max(1, -(-len(texts) // (PROGRESS_STEPS * texts_at_once)))
    parts = []
    for start in range(0, len(texts), step):
        parts.append(encode(texts[start : start + step]))
        done = min(start + step, len(texts))
        rate = done / max(time.perf_counter() - started, 1e-9)
        progress(f"encoded {done:,}/{len(texts):,} documents ({rate:,.0f}/s)")
    vectors = np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)
    seconds = time.perf_counter() - started

    def fill(staging: Path) -> None:
        np.save(staging / VECTORS_FILE, vectors)
        (staging / IDS_FILE).write_text(json.dumps(document_ids), encoding="utf-8")

    publish_folder(folder, fill)
    return DocumentVectors(document_ids, vectors, False, len(texts), seconds)


def _load(folder: Path) -> DocumentVectors | None:
    import numpy as np

    if not folder.is_dir():
        return None
    try:
        vectors = np.load(folder / VECTORS_FILE, mmap_mode="r", allow_pickle=False)
        document_ids = json.loads((folder / IDS_FILE).read_text(encoding="utf-8"))
        if vectors.dtype != np.float32 or vectors.ndim != 2 or not isinstance(document_ids, list):
            raise ValueError(f"{VECTORS_FILE} is not a float32 matrix")
        if len(document_ids) != vectors.shape[0]:
            raise ValueError(f"{IDS_FILE} does not match {VECTORS_FILE}")
        return DocumentVectors(document_ids, vectors, True, 0, 0.0)
    except Exception:  # noqa: BLE001 - any damage at all means: encode again
        shutil.rmtree(folder, ignore_errors=True)
        return None
