"""The scoring protocol: small pure functions, one per rule, over every question at once.

Rankings and labels arrive as Arrow list columns (one list per question) and hits come out as numpy
arrays: a run of 20,000 questions is scored in a few vectorised passes instead of 20,000 Python calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from retrieval_pipeline.core.base.arrow_arrays import indices, list_array, numbers

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

DEFAULT_CUTOFFS = (1, 3)
OVERFETCH_MULTIPLIER = 4


@dataclass(frozen=True)
class CutOffs:
    """Top-1 and top-3 are the methodology's metrics and always present; deeper ones may be added.

    The retriever is asked for the deepest cut-off times the overfetch multiplier, so a chunk-grained
    ranking still fills the deepest cut-off with distinct documents.
    """

    values: tuple[int, ...] = DEFAULT_CUTOFFS
    overfetch_multiplier: int = OVERFETCH_MULTIPLIER

    def __post_init__(self) -> None:
        values = tuple(self.values)
        if any(not isinstance(k, int) or isinstance(k, bool) or k < 1 for k in values):
            raise ValueError(f"cut-offs must be positive integers, got {list(values)}")
        if len(set(values)) != len(values) or list(values) != sorted(values):
            raise ValueError(f"cut-offs must be increasing without repeats, got {list(values)}")
        if not {1, 3} <= set(values):
            raise ValueError(f"cut-offs must include 1 and 3 (the top-1 and top-3 hit rates), got {list(values)}")
        if not isinstance(self.overfetch_multiplier, int) or self.overfetch_multiplier < 1:
            raise ValueError(f"the overfetch multiplier must be a positive integer, got {self.overfetch_multiplier!r}")
        object.__setattr__(self, "values", values)

    @property
    def deepest(self) -> int:
        return self.values[-1]

    @property
    def fetch_limit(self) -> int:
        return self.deepest * self.overfetch_multiplier


def collapsed(rankings: pa.ListArray, depth: int) -> pa.ListArray:
    """Each raw ranking's distinct document ids in rank order: empty ids skipped, first occurrence kept,
    `depth` at most. All rankings at once: when no ranking repeats or leaves empty an id among its first
    `depth` (most retrievers), those are the answer; otherwise the first occurrence of every (ranking, id)
    pair is found in one pass."""
    import numpy as np

    values, parents = _flattened(rankings)
    lengths = np.bincount(parents, minlength=len(rankings))
    kept = np.minimum(lengths, depth)
    heads = np.arange(kept.sum()) - np.repeat(np.cumsum(kept) - kept - (np.cumsum(lengths) - lengths), kept)
    keys, filled = _keys(parents[heads], values.take(indices(heads)))
    keys.sort()
    if filled.all() and not (keys[1:] == keys[:-1]).any():
        return list_array(np.concatenate(([0], np.cumsum(kept))), values.take(indices(heads)))
    keys, filled = _keys(parents, values)
    first = np.zeros(len(keys), bool)
    first[np.unique(keys, return_index=True)[1]] = True
    first = np.flatnonzero(first & filled)
    counts = np.bincount(parents[first], minlength=len(rankings))
    within = np.arange(len(first)) - np.repeat(np.cumsum(counts) - counts, counts)
    kept = np.minimum(counts, depth)
    return list_array(np.concatenate(([0], np.cumsum(kept))), values.take(indices(first[within < depth])))


def _flattened(lists: pa.ListArray) -> tuple[pa.Array, np.ndarray]:
    """Every list's values in one array, and the list each value is in."""
    import pyarrow.compute as pc

    return pc.list_flatten(lists), numbers(pc.list_parent_indices(lists))


def _keys(parents: np.ndarray, values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A number per (list, id) pair, the same for the same id in the same list; and whether each id is
    non-empty."""
    import numpy as np
    import pyarrow.compute as pc

    codes = numbers(values.dictionary_encode().indices).astype(np.int64)
    return parents * (int(codes.max(initial=0)) + 1) + codes, numbers(pc.binary_length(values)) > 0


@dataclass(frozen=True)
class Relevance:
    """Which distinct rank of each question holds an expected id: what every hit and metric is read from.

    `relevant[i, r]` is True when question i's document at rank r + 1 is expected, `judged[i, r]` when it
    is expected or rejected; `retrieved` and `expected` count each question's distinct ids (a question
    nothing answers expects none).
    """

    relevant: np.ndarray
    retrieved: np.ndarray
    expected: np.ndarray
    judged: np.ndarray
    machine_judged: np.ndarray | None = None
    """Where a machine judge labelled the document (None: nowhere); such ranks are `judged` too when the
    run is scored under human+machine labels."""

    @classmethod
    def of(
        cls,
        retrieved: pa.ListArray,
        expected: pa.ListArray,
        rejected: pa.ListArray | None = None,
        machine: pa.ListArray | None = None,
    ) -> Relevance:
        """`retrieved` holds collapsed rankings (distinct ids); `expected` and `rejected` the labels, question
        by question (no rejected ids when None); `machine` the ids a machine judge labelled."""
        relevant, lengths, labels = _matches(retrieved, expected)
        unrejected = rejected is None or not len(_flattened(rejected)[0])  # most sets: no second pass
        judged = relevant if unrejected else relevant | _matches(retrieved, rejected)[0]
        unlabelled = machine is None or not len(_flattened(machine)[0])
        return cls(relevant, lengths, labels, judged, None if unlabelled else _matches(retrieved, machine)[0])

    def first_hit_ranks(self) -> np.ndarray:
        """The 1-based distinct rank from which each question is a hit at every cut-off; 0 if at none.

        Any expected id counts. With no expected ids a question is a hit (from rank 1) only on silence.
        """
        import numpy as np

        found = self.relevant.any(axis=1)
        ranks = np.where(found, self.relevant.argmax(axis=1) + 1, 0)
        return np.where(self.expected == 0, (self.retrieved == 0).astype(ranks.dtype), ranks)


def _matches(retrieved: pa.ListArray, labels: pa.ListArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where each ranking holds one of its question's labels (question x distinct rank), each ranking's
    length, and each question's count of distinct labels."""
    import numpy as np
    import pyarrow as pa

    count = len(retrieved)
    found, found_parents = _flattened(retrieved)
    labels, label_parents = _flattened(labels)
    keys, _ = _keys(np.concatenate((found_parents, label_parents)), pa.concat_arrays([found, labels]))
    found_keys, label_keys = keys[: len(found)], keys[len(found) :]
    order = np.argsort(label_keys)
    label_keys, label_parents = label_keys[order], label_parents[order]
    first = np.ones(len(label_keys), bool)
    first[1:] = label_keys[1:] != label_keys[:-1]
    distinct = label_keys[first]
    slots = np.minimum(np.searchsorted(distinct, found_keys), max(len(distinct) - 1, 0))
    hits = distinct[slots] == found_keys if len(distinct) else np.zeros(len(found_keys), bool)
    lengths = np.bincount(found_parents, minlength=count)
    ranks = np.arange(len(found)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    relevant = np.zeros((count, int(lengths.max(initial=1))), bool)
    relevant[found_parents[hits], ranks[hits]] = True
    return relevant, lengths, np.bincount(label_parents[first], minlength=count)


def hit_rate(hits: int, question_count: int) -> float:
    """Hits over ALL questions of the set; an empty result has rate 0.0 rather than undefined."""
    return hits / question_count if question_count else 0.0
