"""Rerank another configured retriever: its top `depth` documents rescored by a cross-encoder or a rerank
endpoint, the way a two-stage search stack answers.

The first stage is any retriever of the same configuration, built through it. Only the top `depth` of
its distinct documents are rescored, since rescoring costs a model pass per document; the documents below
keep the first stage's order after them, so asking deeper than `depth` still returns a full ranking. Ties
between scores keep the first stage's order. The rerank answers one question at a time on purpose, even
over a first stage that answers in batches: the runner then times each question, so the run's latency
percentiles are the rescoring's cost per question, which is what choosing `depth` trades against quality.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from pydantic import Field

from retrieval_pipeline.core.retrieval.corpus import checked_corpus, read_corpus
from retrieval_pipeline.core.retrieval.kinds import KindContext, KindParams
from retrieval_pipeline.core.retrieval.retriever import ConcurrentRetriever, FailFast, Retriever, RetrieverFault, VersionedIndex
from retrieval_pipeline.retrievers.base.corpus import CorpusKind
from retrieval_pipeline.retrievers.base.members import build_members, check_known
from retrieval_pipeline.retrievers.rerank.scorers import Scorer
from retrieval_pipeline.retrievers.rerank.scorers.cross_encoder import CrossEncoderParams
from retrieval_pipeline.retrievers.rerank.scorers.http import HttpScorerParams

DOCUMENT_FIELDS = ("title", "text")


class RerankParams(KindParams):
    retriever: str = Field(min_length=1, description="the first stage: a retriever of this configuration")
    depth: int = Field(50, ge=1, description="how many of its documents are rescored")
    corpus: str = Field(min_length=1, description="the documents' text (title and text), read once when built")
    scorer: CrossEncoderParams | HttpScorerParams = Field(discriminator="kind")


class RerankKind(CorpusKind):
    """`kind: rerank`: the first stage named, the corpus present and the scorer usable, checked; the first
    stage built through the configuration, the corpus read and the scorer loaded when built."""

    Params = RerankParams

    def checked(self) -> None:
        settings, kind = self.params, KindContext.of(self)
        check_known([settings.retriever], kind, "retriever")
        checked_corpus(settings.corpus, kind)
        settings.scorer.check(kind)

    def build(self) -> RerankRetriever:
        settings, kind = self.params, KindContext.of(self)
        [first_stage] = build_members("rerank", [settings.retriever], kind, "retriever")
        ids, texts = read_corpus(kind.resolve(settings.corpus), DOCUMENT_FIELDS, kind.key)
        scorer = settings.scorer.build(kind)
        return RerankRetriever(self.name, settings, first_stage, dict(zip(ids, (text.strip() for text in texts))), scorer)


class RerankRetriever:
    """The first stage's top `depth` distinct documents by the scorer's relevance, then the rest in its order."""

    def __init__(self, identifier: str, params: RerankParams, first_stage: Retriever, texts: Mapping[str, str], scorer: Scorer):
        self.identifier = identifier
        self.params = params
        self.first_stage = first_stage
        self._texts = texts
        self._scorer = scorer
        # Questions in flight at once: what both stages allow (a first stage saying nothing allows one).
        first = first_stage.concurrency if isinstance(first_stage, ConcurrentRetriever) else 1
        self.concurrency = min(first, scorer.concurrency)
        # A scorer that reaches a service stops the run as that service's kind would; else the first stage decides.
        for stage in (scorer, first_stage):
            if isinstance(stage, FailFast):
                self.fail_fast_after = stage.fail_fast_after
                break

    def retrieve(self, question: str, limit: int) -> list[str]:
        depth = self.params.depth
        ranking = self.first_stage.retrieve(question, max(limit, depth))
        distinct = list(dict.fromkeys(document_id for document_id in ranking if document_id))
        head = distinct[:depth]
        scores = self._scorer.score(question, [self._text(document_id) for document_id in head]) if head else []
        rescored = sorted(range(len(head)), key=lambda rank: -scores[rank])  # stable: ties keep the first stage's order
        return ([head[rank] for rank in rescored] + distinct[depth:])[:limit]

    def retries(self) -> dict[str, int]:
        """The retries its scorer made, when the scorer is a service that retries (`CountsRetries`)."""
        counted = getattr(self._scorer, "retries", None)
        return counted() if counted is not None else {}

    def index_version(self) -> str:
        """Changes when the first stage's index or the scorer's model does."""
        first = self.first_stage.index_version() if isinstance(self.first_stage, VersionedIndex) else "not reported"
        combined = f"{self.first_stage.identifier}={first}\nscorer={self._scorer.version()}\ndepth={self.params.depth}"
        return hashlib.sha256(combined.encode()).hexdigest()[:16]

    def _text(self, document_id: str) -> str:
        text = self._texts.get(document_id)
        if text is None:
            raise RetrieverFault(
                f"{self.first_stage.identifier} returned document {document_id!r}, which the corpus "
                f"{self.params.corpus} does not hold, so it cannot be rescored"
            )
        return text
