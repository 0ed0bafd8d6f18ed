"""The ranking measures' computations, one small function each over every question at once.

A hit rate says whether an answer came; these say how high it came and how many of the answers came,
which is what separates two retrievers with the same top-3 rate. Relevance is binary and the ranking is
the collapsed one, cut at the run's deepest cut-off, so with cut-offs 1, 3, 5, 10 they are exactly
trec_eval's `RR@10`, `nDCG@10` and `R@k`. Which measures exist, at which cut-offs, and the rule for a
question with no expected ids (scored as its hit: silence is the right answer to a question nothing
answers; judged@k reads every ranking as it is) are declared and applied in measures.py, which calls
these functions: they know nothing of it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from retrieval_pipeline.core.scoring.scoring import Relevance


@dataclass(frozen=True)
class Ranked:
    """Each question's collapsed ranking cut at the deepest cut-off D, as what every score reads:
    `relevant[i, r]` is True when question i's document at rank r + 1 is expected, `judged[i, r]` when it
    is expected or rejected, `labels` is the number of expected ids (at least 1, so a recall never divides
    by zero) and `retrieved` the number of distinct documents ranked."""

    relevant: np.ndarray
    labels: np.ndarray
    judged: np.ndarray
    retrieved: np.ndarray
    machine_judged: np.ndarray | None = None
    """Where a machine judge labelled the document; None: nowhere."""

    @classmethod
    def of(cls, relevance: Relevance, depth: int) -> Ranked:
        import numpy as np

        def cut(matrix: np.ndarray) -> np.ndarray:
            padded = np.zeros((len(relevance.expected), depth), bool)
            shown = matrix[:, :depth]
            padded[:, : shown.shape[1]] = shown
            return padded

        machine = None if relevance.machine_judged is None else cut(relevance.machine_judged)
        return cls(
            cut(relevance.relevant), np.maximum(relevance.expected, 1), cut(relevance.judged), relevance.retrieved, machine
        )


def reciprocal_rank(ranked: Ranked, k: int) -> np.ndarray:
    import numpy as np

    relevant = ranked.relevant[:, :k]
    return np.where(relevant.any(axis=1), 1.0 / (relevant.argmax(axis=1) + 1), 0.0)


def ndcg(ranked: Ranked, k: int) -> np.ndarray:
    """Each gain is added rank by rank and the ideal is summed in Python, so the figures are the same
    floats a question-by-question sum gives."""
    import numpy as np

    discounts = [1.0 / math.log2(rank + 1) for rank in range(1, k + 1)]
    ideal = np.array([sum(discounts[:count]) for count in range(k + 1)])
    gained = np.zeros(len(ranked.relevant))
    for rank, discount in enumerate(discounts):
        gained += np.where(ranked.relevant[:, rank], discount, 0.0)
    return gained / ideal[np.minimum(ranked.labels, k)]


def recall(ranked: Ranked, k: int) -> np.ndarray:
    return ranked.relevant[:, :k].sum(axis=1) / ranked.labels


def judged(ranked: Ranked, k: int) -> np.ndarray:
    """The share of the top-k distinct documents that a person judged, as ir_measures' `Judged@k` (over the
    documents shown when fewer than k are). An empty ranking shows nothing unjudged and scores 1. A
    document only a machine judge labelled is not counted, under either label choice."""
    by_person = ranked.judged if ranked.machine_judged is None else ranked.judged & ~ranked.machine_judged
    return _share(by_person, ranked.retrieved, k)


def judged_any(ranked: Ranked, k: int) -> np.ndarray:
    """As `judged`, counting a document a person or a machine judge labelled."""
    either = ranked.judged if ranked.machine_judged is None else ranked.judged | ranked.machine_judged
    return _share(either, ranked.retrieved, k)


def _share(marked: np.ndarray, retrieved: np.ndarray, k: int) -> np.ndarray:
    import numpy as np

    shown = np.minimum(retrieved, k)
    return np.where(shown > 0, marked[:, :k].sum(axis=1) / np.maximum(shown, 1), 1.0)


def mean_scores(scores: Mapping[str, np.ndarray], counted: np.ndarray, questions: int) -> dict[str, float]:
    """Means over `questions` (like the rates) of the scores where `counted` holds: an errored question
    counts as 0, an empty set is 0. Summed in question order, as a plain Python sum would."""
    return {key: (sum(values[counted].tolist()) / questions if questions else 0.0) for key, values in scores.items()}
