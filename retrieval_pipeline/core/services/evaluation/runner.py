"""A set's questions asked of a retriever (asking.py) and what came back made one run's columns.

It neither persists nor compares: that is `record.py`'s job.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.core.golden.fingerprints import question_fingerprint
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.retrieval.latency import BATCH_MEAN, PER_QUESTION
from retrieval_pipeline.core.retrieval.query_modes import QueryPlan
from retrieval_pipeline.core.retrieval.retriever import (
    ApproximateSearch,
    BatchRetriever,
    ConversationalRetriever,
    CountsRetries,
    FailFast,
    Retriever,
    VersionedIndex,
)
from retrieval_pipeline.core.scoring.failures import DEFAULT_FAIL_FAST_AFTER, FailFastGate
from retrieval_pipeline.core.scoring.question_columns import QuestionColumns
from retrieval_pipeline.core.scoring.results import RunResult, utc_now
from retrieval_pipeline.core.scoring.scoring import CutOffs
from retrieval_pipeline.core.services.configuration.settings import RetryPolicy
from retrieval_pipeline.core.services.evaluation.asking import in_batches, one_by_one
from retrieval_pipeline.core.services.evaluation.queries import asked_queries

logger = logging.getLogger(__name__)
Progress = Callable[[int], None]


def run_question_set(
    question_set: GoldenQuestionSet,
    retriever: Retriever,
    *,
    cutoffs: CutOffs = CutOffs(),
    retry: RetryPolicy = RetryPolicy(),
    progress: Progress | None = None,
    queries: QueryPlan = QueryPlan(),
) -> RunResult:
    """The answers, however they arrive, become the run's columns (question_columns.py). Each question is
    asked with the query its retriever's mode makes (`queries`, made before any is asked: queries.py); a
    retriever that receives the conversation (`ConversationalRetriever`) is asked one question at a time."""
    import numpy as np
    import pyarrow as pa

    run_at = utc_now()
    index_version = _index_version(retriever)
    questions = question_set.questions
    conversational = isinstance(retriever, ConversationalRetriever)
    asked_as = asked_queries(question_set, queries, retriever.identifier, conversational=conversational)
    gate = FailFastGate(retriever.fail_fast_after if isinstance(retriever, FailFast) else DEFAULT_FAIL_FAST_AFTER)
    asked = (cutoffs.fetch_limit, cutoffs.deepest, retry, progress, gate)
    if latency_mode(retriever) == BATCH_MEAN:
        blocks = list(in_batches(retriever, asked_as, *asked))
    else:
        blocks = [one_by_one(retriever, asked_as, *asked)]
    columns = QuestionColumns.of(
        question_id=[question.id for question in questions],
        form=[question.form.value for question in questions],
        hard_class=[question.hard_class for question in questions],
        expected_document_ids=[question.expected_document_ids for question in questions],
        retrieved_document_ids=pa.concat_arrays([block.rankings for block in blocks]),
        latency_ms=np.array([latency_ms for block in blocks for latency_ms in block.latencies], np.float64),
        error=[error for block in blocks for error in block.errors],
        fingerprint=[
            question_fingerprint(
                question.question,
                question.expected_document_ids,
                question.form.value,
                question.hard_class,
                question.rejected_document_ids,
                context=question_set.turn_context(question),
            )
            for question in questions
        ],
        rejected_document_ids=[question.rejected_document_ids for question in questions],
        machine_judged_document_ids=[
            question.machine_expected_document_ids + question.machine_rejected_document_ids for question in questions
        ],
        conversation=[question.turn.conversation if question.turn else None for question in questions],
        turn=[question.turn.number if question.turn else None for question in questions],
        query=[None if query.text == question.question else query.text for query, question in zip(asked_as, questions)],
    )
    _report_retries(retriever)
    return RunResult(
        set_identifier=question_set.identifier,
        retriever_identifier=retriever.identifier,
        questions=columns,
        run_at=run_at,
        cutoffs=cutoffs.values,
        index_version=index_version,
        latency_mode=latency_mode(retriever),
        approximation=retriever.approximation([query.text for query in asked_as])
        if isinstance(retriever, ApproximateSearch)
        else None,
        query_mode=queries.mode.label,
        retriever_setup=queries.setup,
    )


def _report_retries(retriever: Retriever) -> None:
    """One warning per cause of the retries the adapter made itself, with their count, not one per retry."""
    if isinstance(retriever, CountsRetries):
        for cause, count in retriever.retries().items():
            logger.warning(
                "retriever %s: %d retr%s after %s", retriever.identifier, count, "y" if count == 1 else "ies", scrub(cause)
            )


def latency_mode(retriever: Retriever) -> str:
    """A retriever with a batch call is timed per batch, so its questions share one mean latency.

    Timing the lexical retriever one question at a time instead would cost a Python round trip per
    question (bm25s scores a batch in one call) and lose the batch path's speed, which keeps the tool's
    overhead over bare bm25s small; the honest figure is the mean, reported as such. A retriever that
    receives the conversation is asked one question at a time, each with its own history.
    """
    batched = isinstance(retriever, BatchRetriever) and not isinstance(retriever, ConversationalRetriever)
    return BATCH_MEAN if batched else PER_QUESTION


def _index_version(retriever: Retriever) -> str | None:
    """A version endpoint that is down must not stop the measurement; the run just lacks a version."""
    if not isinstance(retriever, VersionedIndex):
        return None
    try:
        return retriever.index_version()
    except Exception as error:  # any adapter failure
        logger.warning("retriever %s could not report its index version: %s", retriever.identifier, scrub(str(error)))
        return None
