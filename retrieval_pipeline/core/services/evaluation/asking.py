"""How a retriever is asked: a batch at a time where it can answer batches, else one question at a time,
with bounded retries; the answers arrive as blocks of consecutive questions (runner.py makes the run).
Each question is asked by its query (queries.py): its text, and the conversation before it for a
retriever that receives it; a question whose query could not be made is recorded with why, not asked.

Every error text recorded on a question goes through the secret scrubber, whatever raised it. When the
first questions all fail to reach the service, the rest are not asked (`failures.FailFastGate`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from retrieval_pipeline.core.base.arrow_arrays import from_python
from retrieval_pipeline.core.base.backoff import Transient, with_backoff
from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.core.retrieval.query_modes import Query
from retrieval_pipeline.core.retrieval.retriever import (
    ConcurrentRetriever,
    ConversationalRetriever,
    Retriever,
    RetrieverFault,
    ServiceUnreachable,
)
from retrieval_pipeline.core.scoring.failures import FailFastGate
from retrieval_pipeline.core.scoring.scoring import collapsed
from retrieval_pipeline.core.services.configuration.settings import RetryPolicy

if TYPE_CHECKING:
    import pyarrow as pa

BATCH_SIZE = 1000


def checked_ranking(raw: object) -> Sequence[str]:
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence):
        raise RetrieverFault(f"returned {type(raw).__name__} {_preview(raw)}; expected a sequence of document-id strings")
    for item in raw:
        if not isinstance(item, str):
            raise RetrieverFault(
                f"returned a sequence holding {type(item).__name__} {_preview(item)}; expected document-id strings"
            )
    return raw


def _preview(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


Answer = tuple[Sequence[str], float, "str | None"]


@dataclass(frozen=True)
class Answers:
    """Consecutive questions' answers: rankings already collapsed to the deepest cut-off (empty for an
    error), so only one batch of full rankings is ever alive."""

    rankings: pa.ListArray
    latencies: Sequence[float]
    errors: Sequence[str | None]


def _block(answers: Sequence[Answer], depth: int) -> Answers:
    import pyarrow as pa

    raw = from_python([ranking for ranking, _, _ in answers], pa.list_(pa.string()))
    return Answers(collapsed(raw, depth), [latency_ms for _, latency_ms, _ in answers], [error for _, _, error in answers])


def _ask(retriever: Retriever, query: Query, limit: int, retry: RetryPolicy, conversational: bool) -> tuple[Answer, bool]:
    """The answer, and whether it failed for want of a connection (what the fail-fast gate counts);
    `conversational`: the retriever receives the conversation (a protocol check, asked once per run)."""

    def attempt() -> Answer:
        started = time.perf_counter()
        try:
            if conversational:
                ranking = checked_ranking(retriever.retrieve_in_conversation(query.text, query.history, limit))
            else:
                ranking = checked_ranking(retriever.retrieve(query.text, limit))
        except RetrieverFault:
            raise
        except Exception as error:  # a retriever may fail in any way; the run must go on
            raise Transient(f"{type(error).__name__}: {error}", unreachable=isinstance(error, ConnectionError)) from None
        return ranking, (time.perf_counter() - started) * 1000.0, None

    try:
        return with_backoff(attempt, retry.attempts, retry.backoff_seconds, retry.factor), False
    except RetrieverFault as fault:
        return ((), 0.0, scrub(str(fault))), isinstance(fault, ServiceUnreachable)
    except Transient as last:
        return ((), 0.0, scrub(f"{last.cause} (after {retry.attempts} attempts)")), last.unreachable


def _ask_one_by_one(
    retriever, questions: Sequence[Query], limit: int, retry: RetryPolicy, progress, gate: FailFastGate
) -> list[Answer]:
    concurrency = retriever.concurrency if isinstance(retriever, ConcurrentRetriever) else 1
    conversational = isinstance(retriever, ConversationalRetriever)

    def ask(query: Query) -> Answer:
        skipped = gate.not_asked()
        if query.error is not None:
            answer = ((), 0.0, query.error)
        elif skipped is None:
            answer, unreachable = _ask(retriever, query, limit, retry, conversational)
            gate.record(answer[2], unreachable)
        else:
            answer = ((), 0.0, skipped)
        if progress is not None:
            progress(1)
        return answer

    if concurrency <= 1:
        return [ask(query) for query in questions]
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        return list(pool.map(ask, questions))


def one_by_one(
    retriever, questions: Sequence[Query], limit: int, depth: int, retry: RetryPolicy, progress, gate: FailFastGate
) -> Answers:
    """Each question asked on its own (`concurrency` at once where the retriever allows), with retries."""
    return _block(_ask_one_by_one(retriever, questions, limit, retry, progress, gate), depth)


def in_batches(
    retriever, questions: Sequence[Query], limit: int, depth: int, retry: RetryPolicy, progress, gate: FailFastGate
) -> Iterator[Answers]:
    """A failed or malformed batch falls back to asking its questions one by one, with retries.

    A batch may come back as an Arrow list<string> array (answers that arrive as a table, such as a run
    file's): it is checked and collapsed as a whole, without a Python step per question. A batch holding a
    question whose query could not be made is asked one by one, so that question alone is left out.
    """
    for start in range(0, len(questions), BATCH_SIZE):
        chunk = questions[start : start + BATCH_SIZE]
        started = time.perf_counter()
        try:
            if any(query.error is not None for query in chunk):
                raise RetrieverFault("a query of the batch could not be made")
            rankings = _checked_batch(retriever.retrieve_batch([query.text for query in chunk], limit), len(chunk))
        except Exception:
            yield _block(_ask_one_by_one(retriever, chunk, limit, retry, progress, gate), depth)
            continue
        gate.record(None, unreachable=False)  # the service answered: a later outage is not "the first questions"
        latency_ms = (time.perf_counter() - started) * 1000.0 / len(chunk)
        if progress is not None:
            progress(len(chunk))
        yield Answers(collapsed(rankings, depth), [latency_ms] * len(chunk), [None] * len(chunk))


def _checked_batch(rankings: object, expected: int) -> pa.ListArray:
    import pyarrow as pa

    if len(rankings) != expected:
        raise RetrieverFault(f"batch of {expected} questions returned {len(rankings)} rankings")
    if isinstance(rankings, pa.Array):
        if rankings.type != pa.list_(pa.string()) or rankings.null_count:
            raise RetrieverFault(
                f"returned an Arrow array of {rankings.type} with {rankings.null_count} nulls; expected list<string>"
            )
        return rankings
    return from_python([checked_ranking(ranking) for ranking in rankings], pa.list_(pa.string()))
