"""Scoring a batch of questions against a bm25s index the fastest way this machine offers, same rankings.

bm25s scores a question by summing one sparse column per query term over every document, then
selecting the top k: the cost grows linearly with the corpus, costly at a million documents. Two ways
out, both bm25s' own code:
- its numpy path on a thread pool, one thread per core: numpy releases the interpreter lock for part
  of the work, so extra cores help, though less than linearly;
- its numba kernel, many times faster on a large corpus, but bm25s compiles it in every process (its
  functions are not `cache=True`). Here the same kernel is compiled with numba's on-disk cache, so a
  machine pays the compile once, and it runs without the interpreter lock, one thread per core. A first
  compile still costs seconds, which a small corpus (scored by numpy in a blink) never earns back,
  hence `NUMBA_MIN_DOCUMENTS`.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any, Literal

Backend = Literal["auto", "numpy", "numba"]
NUMBA_MIN_DOCUMENTS = 100_000
TIE_MARGIN = 8  # documents fetched beyond the depth asked, so that a tie at the cut is seen whole


def numba_usable() -> bool:
    """Installed and not switched off (`NUMBA_DISABLE_JIT` would run the kernel as slow Python)."""
    return importlib.util.find_spec("numba") is not None and not os.environ.get("NUMBA_DISABLE_JIT")


def choose_backend(requested: Backend, document_count: int) -> Literal["numpy", "numba"]:
    if requested != "auto":
        return requested
    return "numba" if document_count >= NUMBA_MIN_DOCUMENTS and numba_usable() else "numpy"


def ranked_positions(
    bm25: Any, tokens: Sequence[Sequence[str]], depth: int, backend: Literal["numpy", "numba"], min_score: float
) -> list[list[int]]:
    """Each question's best `depth` corpus positions scoring above `min_score`, equal scores by position.

    Backends keep different members of a tie that straddles the cut, so TIE_MARGIN more documents are
    fetched, and a question whose last fetched document still ties with its last kept one is asked
    again, deeper: the ranking is then the same whichever backend (or thread count) found it.
    """
    total = bm25.scores["num_docs"]
    rankings: list[list[int]] = [[] for _ in tokens]
    pending, fetch = list(range(len(tokens))), min(depth + TIE_MARGIN, total)
    while pending:
        indices, scores = top_k(bm25, [tokens[i] for i in pending], fetch, backend)
        unsettled = []
        for question, row_indices, row_scores in zip(pending, indices, scores):
            ranked = sorted(zip(row_scores, row_indices), key=lambda pair: (-pair[0], pair[1]))
            cut = ranked[depth - 1][0]
            if fetch < total and cut > min_score and ranked[-1][0] == cut:
                unsettled.append(question)
            else:
                rankings[question] = [position for score, position in ranked[:depth] if score > min_score]
        pending, fetch = unsettled, min(fetch * 4, total)
    return rankings


def top_k(bm25: Any, tokens: Sequence[Sequence[str]], k: int, backend: Literal["numpy", "numba"]) -> tuple[list, list]:
    """Document positions and scores of each question's k best documents, as lists of lists."""
    workers = min(os.cpu_count() or 1, len(tokens))
    if backend == "numba":
        return _numba_top_k(bm25, tokens, k, workers)
    indices, scores = bm25.retrieve(list(tokens), k=k, show_progress=False, n_threads=workers if workers > 1 else 0)
    return indices.tolist(), scores.tolist()


@cache
def _numba_kernel():
    from bm25s.numba.retrieve_utils import _retrieve_internal_jitted
    from numba import njit

    return njit(nogil=True, cache=True)(_retrieve_internal_jitted)


def _numba_top_k(bm25: Any, tokens: Sequence[Sequence[str]], k: int, workers: int) -> tuple[list, list]:
    import numpy as np

    kernel = _numba_kernel()
    int_dtype, scores = np.dtype(bm25.int_dtype), bm25.scores
    token_ids = [np.asarray(bm25.get_tokens_ids(question), dtype=int_dtype) for question in tokens]

    def score(part: list) -> tuple:
        pointers = np.cumsum([0] + [len(ids) for ids in part], dtype=int_dtype)
        return kernel(
            query_tokens_ids_flat=np.concatenate(part).astype(int_dtype),
            query_pointers=pointers,
            k=k,
            sorted=True,
            dtype=np.dtype(bm25.dtype),
            int_dtype=int_dtype,
            data=scores["data"],
            indptr=scores["indptr"],
            indices=scores["indices"],
            num_docs=scores["num_docs"],
            nonoccurrence_array=bm25.nonoccurrence_array,
        )

    step = -(-len(token_ids) // workers)
    parts = [token_ids[start : start + step] for start in range(0, len(token_ids), step)]
    with ThreadPoolExecutor(max_workers=len(parts)) as pool:
        answered = list(pool.map(score, parts))
    return (
        [row for _, part_indices in answered for row in part_indices.tolist()],
        [row for part_scores, _ in answered for row in part_scores.tolist()],
    )
