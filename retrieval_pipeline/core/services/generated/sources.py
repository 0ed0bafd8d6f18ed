"""What a generator is asked to write questions for: documents drawn from a query log's uncovered clusters
or from the corpus no question and no logged query reaches, each with the form asked and its provenance.

- From a log: `count` requests shared among the uncovered clusters in proportion to their traffic (largest
  remainders); a cluster's requests go to its nearest documents, fused over the configured retrievers'
  top `depth` for its `QUERIES_PER_CLUSTER` most asked queries by reciprocal rank weighted by each query's
  count, each document used once. The queries' texts go to the generator only where the log says
  `examples: true` (its `EXAMPLES` most asked); otherwise only the documents do.
- From the corpus: a seeded sample of the documents of the retrievers' corpora that no golden question
  expects and that no distinct logged query has in a retriever's top `depth`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from retrieval_pipeline.core.base.errors import InvalidInputError, ServiceFailedError
from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.core.golden.generated import GeneratedProvenance
from retrieval_pipeline.core.golden.query_logs import QueryCounts
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.retrieval.generators import GenerationRequest
from retrieval_pipeline.core.retrieval.retriever import ANSWER_MARK, BatchRetriever, RetrieverFault, batch_as_lists
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.services.labels.pooling import corpus_texts
from retrieval_pipeline.core.services.traffic.coverage import BATCH, Coverage
from retrieval_pipeline.core.services.traffic.sampling import ranked_candidates

QUERIES_PER_CLUSTER = 10
EXAMPLES = 3
RRF_K = 60
"""Reciprocal rank fusion's constant (Cormack et al. 2009): a document's weight from a ranking is 1/(60 + rank)."""


@dataclass(frozen=True)
class Source:
    """One request to make: its document, the form asked, the examples allowed, and where it came from
    (`cluster` and `traffic` for a log's cluster, None for a document of the corpus)."""

    document_id: str
    title: str
    text: str
    form: str
    examples: tuple[str, ...] = ()
    log: str | None = None
    cluster: int | None = None
    traffic: int | None = None

    def __post_init__(self) -> None:
        self.request()  # refused here, naming the document, rather than when it is asked

    def request(self) -> GenerationRequest:
        return GenerationRequest(self.document_id, self.title, self.text, self.form, self.examples)

    def provenance(self, generated_by: str) -> GeneratedProvenance:
        source = "document" if self.cluster is None else "cluster"
        return GeneratedProvenance(
            generated_by=generated_by,
            source=source,
            document_id=self.document_id,
            asked_form=self.form,
            log=self.log,
            cluster=self.cluster,
            traffic=self.traffic,
        )


def allotted(traffic: Sequence[int], count: int) -> list[int]:
    """`count` shared in proportion to `traffic` by largest remainders (Hamilton's method): each share is
    the floor of its quota, and the rest go to the largest fractions, the earlier first on a tie."""
    total = sum(traffic)
    if total <= 0 or count <= 0:
        return [0] * len(traffic)
    quotas = [count * part / total for part in traffic]
    shares = [int(quota) for quota in quotas]
    by_fraction = sorted(range(len(traffic)), key=lambda index: (-(quotas[index] - shares[index]), index))
    for index in by_fraction[: count - sum(shares)]:
        shares[index] += 1
    return shares


def asked_form(index: int, gap_share: float) -> str:
    """The form of the `index`-th request, with `gap` spread evenly at `gap_share` (the set's own mix, or 0
    or 1 when one form is asked for), so the first requests keep the mix however many are drawn. Computed
    per request, never as a list as long as the count asked: that count may be far more than can be drawn."""
    return "gap" if int((index + 1) * gap_share + 1e-9) > int(index * gap_share + 1e-9) else "match"


def cluster_sources(
    project: ProjectConfig,
    coverage: Coverage,
    log: str,
    count: int,
    gap_share: float,
    retrievers: Sequence[str],
    depth: int,
    examples: bool,
) -> list[Source]:
    """Up to `count` sources, shared among the clusters by traffic: each gives at most its documents."""
    sources: list[Source] = []
    used: set[str] = set()
    shares = allotted([cluster.traffic for cluster in coverage.clusters], count)
    for rank, (cluster, share) in enumerate(zip(coverage.clusters, shares), start=1):
        if not share:
            continue
        ranked = _nearest_documents(project, cluster.top[:QUERIES_PER_CLUSTER], retrievers, depth, rank)
        texts = corpus_texts(project, ranked, retrievers)
        chosen = [document for document in ranked if document not in used and _has_text(texts.get(document))][:share]
        used.update(chosen)
        shown = tuple(query for query, _ in cluster.top[:EXAMPLES]) if examples else ()
        for document in chosen:
            form = asked_form(len(sources), gap_share)
            sources.append(Source(document, *texts[document], form, shown, log, rank, cluster.traffic))
    return sources


def corpus_sources(
    project: ProjectConfig,
    question_set: GoldenQuestionSet,
    reached: Collection[str],
    count: int,
    gap_share: float,
    retrievers: Sequence[str],
    seed: int,
) -> list[Source]:
    """Up to `count` sources, from a seeded sample of the documents nothing asks about yet."""
    import numpy

    corpus: set[str] = set()
    for name in retrievers:
        corpus |= project.retriever_kind(name).corpus() or frozenset()
    if not corpus:
        raise InvalidInputError(
            f"none of the retrievers {', '.join(retrievers)} knows its corpus's documents, so none can be drawn: "
            "--from corpus needs a retriever that reads a corpus file (lexical, dense)"
        )
    expected = {document for question in question_set.questions for document in question.expected_document_ids}
    unasked = sorted(corpus - expected - set(reached))
    order = [unasked[index] for index in numpy.random.default_rng(seed).permutation(len(unasked))]
    wanted = min(count, len(order))  # capped first: never more than the documents there are
    sources: list[Source] = []
    for start in range(0, len(order), max(wanted, 1)):  # a chunk's texts at a time: one read of the corpus
        chunk = order[start : start + wanted]
        texts = corpus_texts(project, chunk, retrievers)
        for document in chunk:
            if len(sources) < wanted and _has_text(texts.get(document)):
                sources.append(Source(document, *texts[document], asked_form(len(sources), gap_share)))
        if len(sources) == wanted:
            break
    return sources


def reached_documents(project: ProjectConfig, counts: QueryCounts, retrievers: Sequence[str], depth: int) -> set[str]:
    """Every document some distinct logged query has in a retriever's top `depth`."""
    queries = list(counts.counts)
    reached: set[str] = set()
    for name in retrievers:
        retriever = project.retriever(name)
        for start in range(0, len(queries), BATCH):
            batch = queries[start : start + BATCH]
            try:
                if isinstance(retriever, BatchRetriever):
                    rankings = batch_as_lists(retriever.retrieve_batch(batch, depth))
                else:
                    rankings = [retriever.retrieve(query, depth) for query in batch]
            except RetrieverFault as fault:
                raise _failed(name, "the logged queries", fault) from None
            reached.update(document for ranking in rankings for document in list(ranking)[:depth])
    return reached


def _nearest_documents(
    project: ProjectConfig, queries: Sequence[tuple[str, int]], retrievers: Sequence[str], depth: int, rank: int
) -> list[str]:
    """The documents the cluster's queries find, best first: reciprocal ranks weighted by query counts."""
    weight: dict[str, float] = {}
    for query, count in queries:
        try:
            ranked = ranked_candidates(project, retrievers, "cluster", query, depth)
        except RetrieverFault as fault:
            raise _failed(", ".join(retrievers), f"a query of uncovered cluster {rank}", fault) from None
        for candidate in ranked:
            for _, position in candidate.ranked_by:
                weight[candidate.document_id] = weight.get(candidate.document_id, 0.0) + count / (RRF_K + position)
    return sorted(weight, key=lambda document: (-weight[document], document))


def _failed(names: str, what: str, fault: RetrieverFault) -> ServiceFailedError:
    """The cause without the service's answer, which may quote the logged query."""
    cause = scrub(str(fault)).split(ANSWER_MARK, 1)[0]
    return ServiceFailedError(f"retriever {names} failed on {what}, before any question was generated: {cause}")


def _has_text(texts: tuple[str, str] | None) -> bool:
    return texts is not None and bool(" ".join(texts).strip())
