"""Generators' questions kept on disk, keyed by (generator fingerprint, request), so a pass stopped by an
error, a 429 storm or Ctrl-C is resumed by running the command again, and every question already paid
for is read back instead of asked again.

Kept as the judgement cache keeps answers (sqlite_cache.py). The request is kept
as a hash only (`GenerationRequest.key`), so no example query's text is stored; the question and the
tokens it cost are.
"""

from __future__ import annotations

from collections.abc import Iterable

from retrieval_pipeline.core.base.sqlite_cache import SqliteCache
from retrieval_pipeline.core.retrieval.generators import GeneratedQuestion, GenerationRequest

FILE_NAME = "generations.sqlite"
_SCHEMA = """CREATE TABLE IF NOT EXISTS questions (
    fingerprint TEXT NOT NULL, request TEXT NOT NULL, question TEXT NOT NULL,
    prompt_tokens INTEGER, completion_tokens INTEGER, PRIMARY KEY (fingerprint, request))"""


class GenerationCache(SqliteCache):
    """One generator's questions in `folder`; use as a context manager so the connection is closed."""

    file_name, schema, what = FILE_NAME, _SCHEMA, "generation cache"

    def get(self, request: GenerationRequest) -> GeneratedQuestion | None:
        return self._value(
            "SELECT question FROM questions WHERE fingerprint = ? AND request = ?",
            (self.fingerprint, request.key()),
            lambda row: GeneratedQuestion(row[0]),
        )

    def put_all(self, answers: Iterable[tuple[GenerationRequest, GeneratedQuestion]]) -> None:
        """One transaction (CacheNotWritten when the disk refuses it)."""
        rows = [
            (self.fingerprint, request.key(), answer.text, answer.prompt_tokens, answer.completion_tokens)
            for request, answer in answers
        ]
        self._write("INSERT OR REPLACE INTO questions VALUES (?, ?, ?, ?, ?)", rows)
