"""From the set's gaps to new questions: uncovered queries sampled by traffic, each with the configured
retrievers' top documents, in the judging file shape `judge` reads, marked as new questions.

The sample takes one query from each uncovered cluster first (most traffic first), then draws the rest
with probability proportional to traffic, without replacement; within a cluster a query is drawn in
proportion to its count too. Seeded, so a sample can be drawn again. Each row's `question_id` is
`new-<hash of the query>` and it carries `source_log` and `traffic`, which `judge --apply` records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.services.labels.judging_files import candidate_rows
from retrieval_pipeline.core.services.labels.pooling import Candidate, corpus_texts, with_texts
from retrieval_pipeline.core.services.traffic.clusters import Cluster
from retrieval_pipeline.core.services.traffic.coverage import Coverage

NEW_PREFIX = "new-"
NEW_COLUMNS = ("source_log", "traffic")


def new_question_id(query: str) -> str:
    return NEW_PREFIX + hashlib.sha256(query.encode("utf-8")).hexdigest()[:12]


def sampled_queries(clusters: Sequence[Cluster], size: int, seed: int) -> list[tuple[str, int]]:
    """Up to `size` distinct (query, count): one per cluster in rank order, then by traffic."""
    import numpy

    rng = numpy.random.default_rng(seed)
    chosen: dict[str, int] = {}
    for cluster in clusters[:size]:
        counts = numpy.array([count for _, count in cluster.top], dtype=float)
        query, count = cluster.top[int(rng.choice(len(counts), p=counts / counts.sum()))]
        chosen[query] = count
    rest = [(query, count) for cluster in clusters for query, count in cluster.top if query not in chosen]
    wanted = min(size - len(chosen), len(rest))
    if wanted > 0:
        weights = numpy.array([count for _, count in rest], dtype=float)
        for index in rng.choice(len(rest), size=wanted, replace=False, p=weights / weights.sum()):
            chosen[rest[index][0]] = rest[index][1]
    return list(chosen.items())


def sample_rows(
    project: ProjectConfig, coverage: Coverage, log: str, size: int, seed: int, retrievers: Sequence[str], depth: int
) -> list[dict]:
    """The judging rows of the sample: every (query, document) in a retriever's top `depth`, each once."""
    if not coverage.log.examples:
        raise InvalidInputError(
            "a sample writes the logged queries' text: allow it with examples: true on the log's entry",
            source=project.source,
            key=f"query_logs.{log}",
            field="examples",
        )
    names = list(retrievers) or project.retriever_identifiers
    if not names:
        raise InvalidInputError("no retriever is configured to find documents for the sampled queries", source=project.source)
    sample = sampled_queries(coverage.clusters, size, seed)
    candidates, traffic = [], {}
    for query, count in sample:
        question_id = new_question_id(query)
        traffic[question_id] = count
        candidates.extend(ranked_candidates(project, names, question_id, query, depth))
    rows = candidate_rows(with_texts(candidates, lambda wanted: corpus_texts(project, wanted, names)))
    return [{**row, "source_log": log, "traffic": traffic[row["question_id"]]} for row in rows]


def ranked_candidates(project: ProjectConfig, names: Sequence[str], question_id: str, query: str, depth: int) -> list[Candidate]:
    """Every document in a retriever's top `depth` for `query`, once, best rank first, with who ranked it
    where: the rows to judge beside a sampled query, or beside a generated question (generation.py)."""
    found: dict[str, list[tuple[str, int]]] = {}
    for name in names:
        for rank, document_id in enumerate(project.retriever(name).retrieve(query, depth)[:depth], start=1):
            found.setdefault(document_id, []).append((name, rank))
    ordered = sorted(found, key=lambda document_id: min(rank for _, rank in found[document_id]))
    return [Candidate(question_id, query, (), (), document_id, tuple(found[document_id])) for document_id in ordered]
