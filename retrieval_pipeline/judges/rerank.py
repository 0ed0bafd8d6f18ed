"""`kind: rerank`: a relevance score, from a rerank endpoint or a local CrossEncoder (the rerank retriever's
own scorers, `retrievers/rerank/scorers/`), read as yes from `threshold` up.

A score is no grade: the row's `machine_grade` stays empty and `relevant_from` does not apply. The scorer's
`version()` (its model files, or its endpoint and what is sent with every request) enters the fingerprint,
so a swapped model never passes for the old one's answers.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from retrieval_pipeline.core.retrieval.judges import JudgeKind, MachineJudgement, judge_fingerprint
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.judges.base import JudgeParams
from retrieval_pipeline.retrievers.rerank.scorers import Scorer
from retrieval_pipeline.retrievers.rerank.scorers.cross_encoder import CrossEncoderParams
from retrieval_pipeline.retrievers.rerank.scorers.http import HttpScorerParams


class RerankJudgeParams(JudgeParams):
    kind: Literal["rerank"] = "rerank"
    scorer: CrossEncoderParams | HttpScorerParams = Field(discriminator="kind")
    threshold: float = Field(allow_inf_nan=False, description="a score from here up is yes")


class RerankJudgeKind(JudgeKind[RerankJudgeParams]):
    """The scorer's model folder or endpoint is checked with the parameters, before anything is loaded."""

    Params = RerankJudgeParams

    def checked(self) -> None:
        self.params.scorer.check(KindContext.of(self))

    def build(self) -> RerankJudge:
        return RerankJudge(self.name, self.params, self.params.scorer.build(KindContext.of(self)))


class RerankJudge:
    """One pair per scorer call; the scorer's concurrency, and its fail-fast when it asks a service."""

    def __init__(self, name: str, params: RerankJudgeParams, scorer: Scorer):
        self.name = name
        self.concurrency = scorer.concurrency
        self.fail_fast_after = getattr(scorer, "fail_fast_after", 0)
        self._threshold = params.threshold
        self._scorer = scorer
        self.fingerprint = judge_fingerprint("rerank", params.relevant_from, scorer=scorer.version(), threshold=params.threshold)

    def judge(self, question: str, document: str) -> MachineJudgement:
        (score,) = self._scorer.score(question, [document])
        return MachineJudgement(score >= self._threshold)
