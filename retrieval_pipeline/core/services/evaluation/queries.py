"""What each question of a run is asked with, under its retriever's query mode (query_modes.py): made
before the first question is asked, so a set the mode cannot ask (a turn without a rewrite under
`rewrite`) costs nothing, and a rewriter's answers are all in hand before retrieval is timed.

A rewriter's rewrites are kept as a machine judge's answers are (sqlite_cache.py), keyed by its
fingerprint and a hash of the conversation and the utterance, so a second run of the set asks the
rewriter nothing. A turn the rewriter could not rewrite is that question's error, never the utterance as
typed; when its first turns all fail to reach the service the rest are not sent (`FailFastGate`).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.core.base.sqlite_cache import CacheNotWritten, SqliteCache
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet
from retrieval_pipeline.core.retrieval.query_modes import Query, QueryPlan, chat_history, check_rewrites, query_text
from retrieval_pipeline.core.retrieval.retriever import RetrieverFault, ServiceUnreachable
from retrieval_pipeline.core.retrieval.rewriters import Rewrite, Rewriter, rewrite_key
from retrieval_pipeline.core.scoring.failures import FailFastGate

logger = logging.getLogger(__name__)
FILE_NAME = "rewrites.sqlite"
_SCHEMA = """CREATE TABLE IF NOT EXISTS rewrites (
    fingerprint TEXT NOT NULL, turn TEXT NOT NULL, rewrite TEXT NOT NULL,
    prompt_tokens INTEGER, completion_tokens INTEGER, PRIMARY KEY (fingerprint, turn))"""


class RewriteCache(SqliteCache):
    """One rewriter's rewrites in `folder`; use as a context manager so the connection is closed."""

    file_name, schema, what = FILE_NAME, _SCHEMA, "rewrite cache"

    def get(self, key: str) -> Rewrite | None:
        return self._value("SELECT rewrite FROM rewrites WHERE fingerprint = ? AND turn = ?", (self.fingerprint, key), _rewrite)

    def put_all(self, rewrites: dict[str, Rewrite]) -> None:
        """One transaction (CacheNotWritten when the disk refuses it)."""
        rows = [(self.fingerprint, key, r.text, r.prompt_tokens, r.completion_tokens) for key, r in rewrites.items()]
        self._write("INSERT OR REPLACE INTO rewrites VALUES (?, ?, ?, ?, ?)", rows)


def _rewrite(row: tuple) -> Rewrite:
    if not isinstance(row[0], str) or not row[0].strip():
        raise ValueError(f"a rewrite stored as {row[0]!r}")
    return Rewrite(row[0])


def asked_queries(
    question_set: GoldenQuestionSet, plan: QueryPlan, retriever: str, *, conversational: bool = False
) -> list[Query]:
    """Each question's query, in the set's order; refused (InvalidInputError) when the mode cannot ask the set.
    The turns before each turn are gathered only when the mode or the retriever (`conversational`: it
    receives the conversation) reads them, so a set of turns asked as typed costs what single questions do."""
    mode = plan.mode
    if mode.name == "rewrite":
        check_rewrites(question_set, retriever)
    if mode.name in ("current", "rewrite") and not conversational:
        return [Query(query_text(question, (), mode)) for question in question_set.questions]
    earlier = _earlier_turns(question_set)
    queries = []
    for question in question_set.questions:
        turns, messages = earlier.get(question.id, ((), ()))
        queries.append(Query(query_text(question, turns, mode), messages))
    if mode.name != "rewriter":
        return queries
    rewritten = [i for i, question in enumerate(question_set.questions) if question.id in earlier and earlier[question.id][0]]
    if not rewritten:
        return queries
    if plan.rewriter is None or plan.cache is None:
        raise ValueError(f"retriever {retriever}: the mode {mode.label} needs its rewriter and a cache folder")
    answers = _rewrites(plan.rewriter(), plan.cache, [(question_set.questions[i], queries[i]) for i in rewritten])
    for index, answer in zip(rewritten, answers):
        queries[index] = answer
    return queries


def _earlier_turns(question_set: GoldenQuestionSet) -> dict[str, tuple[tuple[GoldenQuestion, ...], tuple]]:
    """Each turn's earlier turns and their chat messages, in one pass per conversation (the messages grown
    turn by turn), so a run's cost per turn does not grow with the conversation's length."""
    earlier: dict[str, tuple[tuple[GoldenQuestion, ...], tuple]] = {}
    for turns in question_set.conversations.values():
        messages: tuple = ()
        for index, turn in enumerate(turns):
            earlier[turn.id] = (turns[:index], messages)
            messages += chat_history((turn,))
    return earlier


def _rewrites(rewriter: Rewriter, cache_folder: Path, turns: list[tuple[GoldenQuestion, Query]]) -> list[Query]:
    """Each turn's query made of its rewrite: from the cache, else asked (`concurrency` at once)."""
    keys = [rewrite_key(query.history, question.question) for question, query in turns]
    gate = FailFastGate(rewriter.fail_fast_after)
    with RewriteCache(cache_folder, rewriter.fingerprint) as cache:
        cached = [cache.get(key) for key in keys]

        def asked(index: int) -> Rewrite | str:
            question, query = turns[index]
            if cached[index] is not None:
                return cached[index]
            skipped = gate.not_asked()
            if skipped is not None:
                return skipped
            try:
                rewrite = rewriter.rewrite(query.history, question.question)
            except RetrieverFault as fault:
                error = scrub(f"rewriter {rewriter.name} could not rewrite the turn: {fault}")
                gate.record(error, isinstance(fault, ServiceUnreachable))
                return error
            except Exception as failure:  # a rewriter of any kind may fail in any way; the run goes on
                error = scrub(f"rewriter {rewriter.name} failed: {type(failure).__name__}: {failure}")
                gate.record(error, isinstance(failure, ConnectionError))
                return error
            gate.record(None, False)
            return rewrite

        with ThreadPoolExecutor(max_workers=max(1, rewriter.concurrency)) as pool:
            answers = list(pool.map(asked, range(len(turns))))
        fresh = {key: answer for key, answer, hit in zip(keys, answers, cached) if isinstance(answer, Rewrite) and hit is None}
        try:
            cache.put_all(fresh)
        except CacheNotWritten as error:  # the run goes on: its rewrites are asked again next time
            logger.warning("%s", error)
    return [
        Query(answer.text, query.history) if isinstance(answer, Rewrite) else Query(question.question, query.history, answer)
        for (question, query), answer in zip(turns, answers)
    ]
