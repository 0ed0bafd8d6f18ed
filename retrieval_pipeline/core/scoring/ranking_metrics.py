"""Ranking metrics beside the hit rates: MRR, Recall@k and nDCG, one small pure function each (as ranx does).

A hit rate says whether an answer came; these say how high it came and how many of the answers came,
which is what separates two retrievers with the same top-3 rate. Relevance is binary (an expected id is
relevant, anything else is not) and the ranking is the collapsed one, cut at the run's deepest
cut-off D: the SPEC's protocol is unchanged, so MRR and nDCG are named `@D` and Recall by each cut-off.
With cut-offs 1, 3, 5, 10 they are exactly trec_eval's `RR@10`, `nDCG@10` and `R@k`.

A question with no expected ids scores 1 on every metric when nothing was retrieved and 0 otherwise,
the same rule as its hit: silence is the right answer to a question nothing answers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def reciprocal_rank(retrieved: Sequence[str], expected: Sequence[str], depth: int) -> float:
    if not expected:
        return _silence(retrieved)
    return next((1.0 / rank for rank, doc in enumerate(retrieved[:depth], start=1) if doc in expected), 0.0)


def recall(retrieved: Sequence[str], expected: Sequence[str], k: int) -> float:
    if not expected:
        return _silence(retrieved)
    relevant = set(expected)
    return len(relevant.intersection(retrieved[:k])) / len(relevant)


def ndcg(retrieved: Sequence[str], expected: Sequence[str], depth: int) -> float:
    """Gain 1 per relevant id at rank i, discounted by log2(i + 1), over the best order of the relevant ids."""
    if not expected:
        return _silence(retrieved)
    relevant = set(expected)
    gained = sum(1.0 / math.log2(rank + 1) for rank, doc in enumerate(retrieved[:depth], start=1) if doc in relevant)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(relevant), depth) + 1))
    return gained / ideal


def _silence(retrieved: Sequence[str]) -> float:
    return 0.0 if retrieved else 1.0


def metric_names(cutoffs: Sequence[int]) -> tuple[str, ...]:
    """`mrr@D`, `ndcg@D`, then `recall@k` for every cut-off k, D being the deepest."""
    depth = cutoffs[-1]
    return (f"mrr@{depth}", f"ndcg@{depth}", *(f"recall@{k}" for k in cutoffs))


def question_metrics(retrieved: Sequence[str], expected: Sequence[str], cutoffs: Sequence[int]) -> dict[str, float]:
    depth = cutoffs[-1]
    return {
        f"mrr@{depth}": reciprocal_rank(retrieved, expected, depth),
        f"ndcg@{depth}": ndcg(retrieved, expected, depth),
        **{f"recall@{k}": recall(retrieved, expected, k) for k in cutoffs},
    }


def mean_metrics(per_question: Sequence[dict[str, float] | None], cutoffs: Sequence[int]) -> dict[str, float]:
    """Means over ALL questions (like the rates); an errored question (None) counts as 0, an empty set is 0."""
    count = len(per_question)
    return {
        name: (sum(scores[name] for scores in per_question if scores is not None) / count if count else 0.0)
        for name in metric_names(cutoffs)
    }
