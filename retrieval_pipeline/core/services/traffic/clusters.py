"""The uncovered traffic grouped into clusters of alike queries, ranked by traffic: the set's gaps.

Queries arrive most asked first. The first `CLUSTER_LIMIT` distinct uncovered queries are grouped by
scikit-learn's AgglomerativeClustering (average linkage over cosine distances, cut at `distance`, so no
number of clusters is guessed); each later, less asked one joins the cluster of its nearest clustered
query. Memory stays bounded by the limit (2,000 vectors and their 2,000 x 2,000 distances) whatever the log.
scikit-learn and scipy are the [coverage] extra, which `coverage.measure_coverage` requires first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

CLUSTER_LIMIT = 2000
KEPT = 50
"""The most asked queries a cluster keeps: its examples (up to 3 are shown) and what `--sample` draws from."""


@dataclass(frozen=True)
class Cluster:
    traffic: int
    distinct: int
    top: tuple[tuple[str, int], ...]
    """(query, count) of its most asked queries, most asked first, up to `KEPT`."""


@dataclass
class _Growing:
    traffic: int = 0
    distinct: int = 0
    top: list[tuple[str, int]] = field(default_factory=list)

    def add(self, query: str, count: int) -> None:
        self.traffic += count
        self.distinct += 1
        if len(self.top) < KEPT:
            self.top.append((query, count))


class UncoveredClusters:
    """Fed uncovered queries in descending traffic with their unit vectors; `clusters()` when done."""

    def __init__(self, distance: float, limit: int = CLUSTER_LIMIT):
        self._distance = distance
        self._limit = limit
        self._pending: list[tuple[str, int]] = []
        self._pending_vectors: list = []
        self._anchors = None  # the clustered queries' vectors, once clustered
        self._labels = None
        self._groups: list[_Growing] = []

    def add(self, queries: Sequence[str], counts: Sequence[int], vectors) -> None:
        if self._anchors is None:
            room = self._limit - len(self._pending)
            self._pending.extend(zip(queries[:room], counts[:room]))
            self._pending_vectors.append(vectors[:room])
            if len(self._pending) < self._limit:
                return
            self._cluster()
            queries, counts, vectors = queries[room:], counts[room:], vectors[room:]
        if len(queries):
            self._join(queries, counts, vectors)

    def clusters(self) -> list[Cluster]:
        if self._anchors is None:
            self._cluster()
        ranked = sorted(self._groups, key=lambda group: -group.traffic)
        return [Cluster(group.traffic, group.distinct, tuple(group.top)) for group in ranked if group.distinct]

    def _cluster(self) -> None:
        import numpy

        self._anchors = _stacked(self._pending_vectors)
        self._labels = _labels(self._anchors, self._distance)
        self._groups = [_Growing() for _ in range(int(self._labels.max()) + 1 if len(self._labels) else 0)]
        for (query, count), label in zip(self._pending, self._labels.tolist()):
            self._groups[label].add(query, count)
        self._pending, self._pending_vectors = [], []
        self._labels = numpy.asarray(self._labels)

    def _join(self, queries: Sequence[str], counts: Sequence[int], vectors) -> None:
        import numpy

        similarity = vectors @ self._anchors.T
        nearest = numpy.asarray(similarity.argmax(axis=1)).ravel()
        for query, count, anchor in zip(queries, counts, nearest.tolist()):
            self._groups[self._labels[anchor]].add(query, count)


def _stacked(parts: list):
    import numpy
    import scipy.sparse

    if parts and scipy.sparse.issparse(parts[0]):
        return scipy.sparse.vstack(parts).tocsr()
    return numpy.vstack(parts) if parts else numpy.zeros((0, 1), dtype=numpy.float32)


def _labels(vectors, distance: float):
    """One cluster label per row; a single query is its own cluster (the library needs two)."""
    import numpy
    import scipy.sparse
    from sklearn.cluster import AgglomerativeClustering

    if vectors.shape[0] < 2:
        return numpy.zeros(vectors.shape[0], dtype=int)
    similarity = vectors @ vectors.T
    similarity = similarity.toarray() if scipy.sparse.issparse(similarity) else similarity
    distances = numpy.clip(1.0 - similarity, 0.0, 2.0)
    numpy.fill_diagonal(distances, 0.0)
    model = AgglomerativeClustering(n_clusters=None, metric="precomputed", linkage="average", distance_threshold=distance)
    return model.fit_predict(distances)
