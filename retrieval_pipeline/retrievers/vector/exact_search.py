"""Exact nearest neighbours by inner product: one matrix product per block of documents, so memory stays
flat however large the (memory-mapped) corpus, and every document is scored.

Ties rank by document order, whatever the block size: a partial sort may choose freely among equal
scores at its boundary, so a block where that matters is sorted fully (stably) instead.
"""

from __future__ import annotations

BLOCK_ROWS = 32768


def top_positions(queries, vectors, depth: int, block_rows: int = BLOCK_ROWS):
    """(questions, min(depth, documents)) document positions, best first."""
    import numpy as np

    best_scores = np.empty((len(queries), 0), dtype=np.float32)
    best = np.empty((len(queries), 0), dtype=np.int64)
    for start in range(0, vectors.shape[0], block_rows):
        scores = queries @ np.asarray(vectors[start : start + block_rows]).T
        positions = _block_top(scores, min(depth, scores.shape[1]))
        merged_scores = np.concatenate([best_scores, np.take_along_axis(scores, positions, axis=1)], axis=1)
        merged = np.concatenate([best, positions + start], axis=1)
        order = np.argsort(-merged_scores, axis=1, kind="stable")[:, :depth]  # earlier blocks first among ties
        best_scores, best = np.take_along_axis(merged_scores, order, axis=1), np.take_along_axis(merged, order, axis=1)
    return best


def _block_top(scores, keep: int):
    """The block's `keep` best positions, ties by position."""
    import numpy as np

    if keep >= scores.shape[1]:
        return np.argsort(-scores, axis=1, kind="stable")
    chosen = np.sort(np.argpartition(-scores, keep - 1, axis=1)[:, :keep], axis=1)
    chosen_scores = np.take_along_axis(scores, chosen, axis=1)
    top = np.take_along_axis(chosen, np.argsort(-chosen_scores, axis=1, kind="stable"), axis=1)
    ambiguous = (scores >= chosen_scores.min(axis=1, keepdims=True)).sum(axis=1) > keep  # a tie at the boundary
    if ambiguous.any():
        top[ambiguous] = np.argsort(-scores[ambiguous], axis=1, kind="stable")[:, :keep]
    return top
