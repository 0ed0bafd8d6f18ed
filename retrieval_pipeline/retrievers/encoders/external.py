"""What encoders whose model lives elsewhere share (an embeddings endpoint, a function: `openai.py`,
`callable.py`): nothing here can read their model's bytes, so they are named by configuration, and what
they answer is checked where it arrives rather than trusted.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from retrieval_pipeline.retrievers.encoders.base import checksum_of

if TYPE_CHECKING:
    import numpy


def identity_fingerprints(runtime: str, normalize: bool, **identity) -> tuple[str, str]:
    """(model fingerprint, vector fingerprint) of a model known only by name (an endpoint's url and model,
    a function's dotted name, and an optional `version`): nothing here can see a model swapped behind it."""
    model = checksum_of((), runtime=runtime, **identity)
    return model, checksum_of((), model=model, normalize=normalize)


class VectorWidth:
    """The width of the first vectors an encoder gave (or the width it asked for), which every later
    batch must share, documents and questions alike: a model swapped behind a name in the middle of an
    encode is caught where its answer arrives, naming it, not as a numpy error when batches are joined."""

    def __init__(self, asked: int | None = None):
        self._width = asked
        self._source = "the width asked for (dimensions)" if asked else "the width of earlier vectors"
        self._lock = threading.Lock()

    def known(self) -> int | None:
        return self._width

    def check(self, width: int, fault: Callable[[str], Exception]) -> None:
        with self._lock:
            self._width = self._width or width
        if width != self._width:
            raise fault(f"vectors of width {width}, not {self._width}, {self._source}")


def checked_vectors(values, count: int, normalize: bool, fault: Callable[[str], Exception], width: VectorWidth) -> numpy.ndarray:
    """Rows from outside (a service, a user's function) as a finite float32 (count, `width`) matrix,
    unit length with `normalize`; anything else raises `fault`'s error, saying what came back."""
    import numpy as np

    try:
        vectors = np.asarray(values)
    except ValueError:  # ragged rows
        raise fault(f"{count} texts gave rows of different lengths") from None
    if vectors.dtype.kind not in "fiu":  # strings, booleans, objects: not vectors, even where numpy could cast them
        raise fault(f"vectors must be numbers, not {vectors.dtype}")
    if vectors.ndim != 2 or vectors.shape[0] != count or vectors.shape[1] == 0:
        raise fault(f"{count} texts gave an array of shape {vectors.shape}, not ({count}, dimension)")
    if not np.isfinite(vectors).all():
        raise fault("vectors hold NaN or infinite values")
    width.check(vectors.shape[1], fault)
    if normalize:
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return np.ascontiguousarray(vectors, dtype=np.float32)


def in_batches(
    texts: Sequence[str],
    batch_size: int,
    encode_batch: Callable[[list[str]], numpy.ndarray],
    concurrency: int = 1,
) -> numpy.ndarray:
    """`encode_batch` over consecutive slices of `batch_size` texts, up to `concurrency` at once, joined in
    order (`encode_batch` checks each batch's width, so they join)."""
    import numpy as np

    if not texts:
        return np.empty((0, 0), dtype=np.float32)
    batches = [list(texts[start : start + batch_size]) for start in range(0, len(texts), batch_size)]
    if len(batches) == 1 or concurrency == 1:
        rows = [encode_batch(batch) for batch in batches]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(concurrency, len(batches))) as pool:
            rows = list(pool.map(encode_batch, batches))
    return np.concatenate(rows)
