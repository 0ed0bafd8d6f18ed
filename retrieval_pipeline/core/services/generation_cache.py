"""Generators' questions kept on disk, keyed by (generator fingerprint, request), so a pass stopped by an
error, a 429 storm or Ctrl-C is resumed by running the command again, and every question already paid
for is read back instead of asked again.

The judgement cache's approach (judgement_cache.py): SQLite, because each batch of answers must land
whole or not at all and two commands may share one cache folder; write-ahead logging without waiting for
the disk, because it is a cache (a power cut costs its last batches, asked again). The request is kept
as a hash only (`GenerationRequest.key`), so no example query's text is stored; the question and the
tokens it cost are.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.generators import GeneratedQuestion, GenerationRequest

FILE_NAME = "generations.sqlite"
_SCHEMA = """CREATE TABLE IF NOT EXISTS questions (
    fingerprint TEXT NOT NULL, request TEXT NOT NULL, question TEXT NOT NULL,
    prompt_tokens INTEGER, completion_tokens INTEGER, PRIMARY KEY (fingerprint, request))"""


class GenerationCache:
    """One generator's questions in `folder`; use as a context manager so the connection is closed."""

    def __init__(self, folder: Path, fingerprint: str):
        self.fingerprint = fingerprint
        self.location = Path(folder) / FILE_NAME
        try:
            Path(folder).mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.location, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as error:
            raise InvalidInputError(f"cannot open the generation cache: {error}", source=str(folder)) from None

    def __enter__(self) -> GenerationCache:
        return self

    def __exit__(self, *exc_info) -> None:
        self._db.close()

    def get(self, request: GenerationRequest) -> GeneratedQuestion | None:
        found = self._db.execute(
            "SELECT question FROM questions WHERE fingerprint = ? AND request = ?", (self.fingerprint, request.key())
        ).fetchone()
        return None if found is None else GeneratedQuestion(found[0])

    def put_all(self, answers: Iterable[tuple[GenerationRequest, GeneratedQuestion]]) -> None:
        """One transaction: the batch is kept whole or, stopped midway, not at all."""
        rows = [
            (self.fingerprint, request.key(), answer.text, answer.prompt_tokens, answer.completion_tokens)
            for request, answer in answers
        ]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO questions VALUES (?, ?, ?, ?, ?)", rows)
