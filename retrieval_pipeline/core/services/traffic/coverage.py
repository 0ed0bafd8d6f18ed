"""Which of a log's traffic a golden set covers: each distinct query assigned to its nearest golden
question when the two are at least `threshold` alike (see query_similarity for the two methods).

`assigned_traffic` is what traffic-weighted rates read (every question's assigned count); `measure_coverage`
adds what the `coverage` command reports: the uncovered traffic's clusters and the covered traffic that
reads as GAP or MATCH against its question's expected documents. Clustering needs the [coverage] extra;
`measure_coverage` (the command's and the Dagster asset's) refuses without it before reading anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.base.extras import missing_extra
from retrieval_pipeline.core.golden.forms import MATCH_THRESHOLD, best_overlap, content_terms
from retrieval_pipeline.core.golden.query_logs import QueryCounts, read_query_log
from retrieval_pipeline.core.golden.question_files import SET_FILE_SUFFIXES, load_question_set_file
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.services.labels.pooling import corpus_texts
from retrieval_pipeline.core.services.traffic.clusters import Cluster, UncoveredClusters
from retrieval_pipeline.core.services.traffic.similarity import EncoderSimilarity, LexicalSimilarity

BATCH = 1024
"""Distinct queries compared at once: one encoder call's worth, a few MB of scores."""
CLUSTERING_MODULES = ("sklearn", "scipy")
"""What clustering the uncovered traffic imports: the [coverage] extra (traffic weights need neither)."""


@dataclass(frozen=True)
class TrafficAssignment:
    """Every question of the set with the traffic (count of logged queries) assigned to it, 0 when none."""

    by_question: Mapping[str, int]
    covered: int
    total: int

    @property
    def share(self) -> float | None:
        return self.covered / self.total if self.total else None


def traffic_by_question(question_ids: Sequence[str], nearest, similarity, counts, threshold: float) -> TrafficAssignment:
    """Pure: the traffic of the queries whose `similarity` to question `nearest` (an index into
    `question_ids`) is at least `threshold`, summed per question; `counts` is each query's traffic."""
    import numpy

    nearest, similarity, counts = (numpy.asarray(values) for values in (nearest, similarity, counts))
    covered = similarity >= threshold
    sums = numpy.bincount(nearest[covered].astype(int), weights=counts[covered], minlength=len(question_ids))
    return TrafficAssignment(
        {question_id: int(total) for question_id, total in zip(question_ids, sums)},
        int(counts[covered].sum()),
        int(counts.sum()),
    )


@dataclass(frozen=True)
class Coverage:
    """One log against one set: the assignment, the distinct queries' share, and what `coverage` reports."""

    log: QueryCounts
    method: str
    threshold: float
    assignment: TrafficAssignment
    covered_distinct: int
    clusters: tuple[Cluster, ...]
    match_traffic: int | None
    """Covered traffic whose query shares at least half its content terms with one of its question's
    expected documents (forms.MATCH_THRESHOLD); None when no configured corpus knows those documents."""


def named_set(project: ProjectConfig, name: str) -> GoldenQuestionSet:
    """A configured set's identifier, or the path of a set file (YAML, JSON, JSONL)."""
    from pathlib import Path

    path = Path(name).expanduser()
    if path.suffix in SET_FILE_SUFFIXES and path.is_file():
        return load_question_set_file(path)
    return project.question_set(name)


def read_log(project: ProjectConfig, log: str) -> QueryCounts:
    spec, path = project.query_log(log)
    return read_query_log(spec, path)


def similarity_for(project: ProjectConfig, question_set: GoldenQuestionSet, retriever: str | None = None, lexical: bool = False):
    """The named retriever's encoder; without one, the first configured retriever that embeds questions;
    the lexical method when `lexical` or none embeds."""
    texts = [question.question for question in question_set.questions]
    if retriever is not None:
        if retriever not in project.retriever_specs:
            project.retriever(retriever)  # refused, naming the configured retrievers
        encode = project.retriever_kind(retriever).question_encoder()
        if encode is None:
            raise InvalidInputError(f"retriever {quoted(retriever)} embeds no questions (its kind has no encoder)")
        return EncoderSimilarity(retriever, encode, texts)
    embedding = (
        [] if lexical else [name for name in project.retriever_identifiers if project.retriever_kind_class(name).embeds_questions]
    )
    if embedding:
        return EncoderSimilarity(embedding[0], project.retriever_kind(embedding[0]).question_encoder(), texts)
    return LexicalSimilarity(texts)


def assigned_traffic(project: ProjectConfig, question_set: GoldenQuestionSet, log_name: str) -> TrafficAssignment:
    """The log's traffic per question of the set, by the configured method and `coverage.threshold`."""
    similarity = similarity_for(project, question_set)
    threshold = _threshold(project, similarity, None)
    return _scan(read_log(project, log_name), question_set, similarity, threshold, clusters=None)[0]


def measure_coverage(
    project: ProjectConfig,
    question_set: GoldenQuestionSet,
    log: str | QueryCounts,
    *,
    retriever: str | None = None,
    lexical: bool = False,
    threshold: float | None = None,
) -> Coverage:
    """Refused before anything is read or encoded where the [coverage] extra, which clusters, is missing."""
    missing = missing_extra(CLUSTERING_MODULES, "coverage")
    if missing:
        raise InvalidInputError(f"coverage clusters the uncovered traffic with scikit-learn; {missing}")
    similarity = similarity_for(project, question_set, retriever, lexical)
    counts = read_log(project, log) if isinstance(log, str) else log
    threshold = _threshold(project, similarity, threshold)
    clusters = UncoveredClusters(distance=1.0 - threshold)
    assignment, covered_distinct, covered = _scan(counts, question_set, similarity, threshold, clusters)
    return Coverage(
        counts,
        similarity.name,
        threshold,
        assignment,
        covered_distinct,
        tuple(clusters.clusters()),
        _match_traffic(project, question_set, covered),
    )


def _threshold(project: ProjectConfig, similarity, given: float | None) -> float:
    for value in (given, project.coverage.threshold):
        if value is not None:
            return value
    return similarity.default_threshold


def _scan(counts: QueryCounts, question_set: GoldenQuestionSet, similarity, threshold: float, clusters):
    """Distinct queries most asked first, a batch at a time: the assignment, the covered distinct count,
    and (question index, query, count) of the covered ones for GAP/MATCH when clustering."""
    import numpy

    queries = sorted(counts.counts, key=lambda query: -counts.counts[query])
    nearest, alike = numpy.zeros(len(queries), dtype=numpy.int32), numpy.zeros(len(queries), dtype=numpy.float64)
    traffic = numpy.fromiter((counts.counts[query] for query in queries), dtype=numpy.int64, count=len(queries))
    covered: list[tuple[int, str, int]] = []
    for start in range(0, len(queries), BATCH):
        batch = queries[start : start + BATCH]
        found = similarity.nearest(batch, with_vectors=clusters is not None)
        nearest[start : start + len(batch)], alike[start : start + len(batch)] = found.question, found.similarity
        if clusters is not None:
            out = numpy.flatnonzero(found.similarity < threshold)
            clusters.add([batch[i] for i in out], traffic[start + out].tolist(), found.vectors[out])
            covered.extend(
                (int(found.question[i]), batch[i], int(traffic[start + i]))
                for i in numpy.flatnonzero(found.similarity >= threshold)
            )
    ids = [question.id for question in question_set.questions]
    return traffic_by_question(ids, nearest, alike, traffic, threshold), int((alike >= threshold).sum()), covered


def _match_traffic(project: ProjectConfig, question_set: GoldenQuestionSet, covered: list[tuple[int, str, int]]) -> int | None:
    questions = question_set.questions
    wanted = {document for index in {index for index, _, _ in covered} for document in questions[index].expected_document_ids}
    texts = corpus_texts(project, wanted) if wanted else {}
    if wanted and not texts:
        return None
    targets: dict[int, list[set[str]]] = {}
    matched = 0
    for index, query, count in covered:
        if index not in targets:
            targets[index] = [content_terms(" ".join(texts[d])) for d in questions[index].expected_document_ids if d in texts]
        if best_overlap(content_terms(query), targets[index]) >= MATCH_THRESHOLD:
            matched += count
    return matched
