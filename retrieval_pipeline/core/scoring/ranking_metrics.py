"""Ranking metrics beside the hit rates: MRR, Recall@k and nDCG, one array per metric over every question.

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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from retrieval_pipeline.core.scoring.scoring import Relevance


def metric_names(cutoffs: Sequence[int]) -> tuple[str, ...]:
    """`mrr@D`, `ndcg@D`, then `recall@k` for every cut-off k, D being the deepest."""
    depth = cutoffs[-1]
    return (f"mrr@{depth}", f"ndcg@{depth}", *(f"recall@{k}" for k in cutoffs))


def question_metrics(relevance: Relevance, cutoffs: Sequence[int]) -> dict[str, np.ndarray]:
    """Every question's metrics, one array per metric name.

    Each nDCG gain is added rank by rank and the ideal is summed in Python, so the figures are the same
    floats a question-by-question sum gives.
    """
    import numpy as np

    depth = cutoffs[-1]
    relevant = np.zeros((len(relevance.expected), depth), bool)
    shown = relevance.relevant[:, :depth]
    relevant[:, : shown.shape[1]] = shown
    discounts = [1.0 / math.log2(rank + 1) for rank in range(1, depth + 1)]
    ideal = np.array([sum(discounts[:count]) for count in range(depth + 1)])
    labels = np.maximum(relevance.expected, 1)
    found = relevant.any(axis=1)
    gained = np.zeros(len(relevant))
    for rank, discount in enumerate(discounts):
        gained += np.where(relevant[:, rank], discount, 0.0)
    scores = {
        f"mrr@{depth}": np.where(found, 1.0 / (relevant.argmax(axis=1) + 1), 0.0),
        f"ndcg@{depth}": gained / ideal[np.minimum(labels, depth)],
        **{f"recall@{k}": relevant[:, :k].sum(axis=1) / labels for k in cutoffs},
    }
    silence = np.where(relevance.retrieved == 0, 1.0, 0.0)
    unlabelled = relevance.expected == 0
    return {name: np.where(unlabelled, silence, values) for name, values in scores.items()}


def mean_metrics(
    scores: Mapping[str, np.ndarray], counted: np.ndarray, questions: int, cutoffs: Sequence[int]
) -> dict[str, float]:
    """Means over `questions` (like the rates) of the scores where `counted` holds: an errored question
    counts as 0, an empty set is 0. Summed in question order, as a plain Python sum would."""
    return {name: (sum(scores[name][counted].tolist()) / questions if questions else 0.0) for name in metric_names(cutoffs)}
