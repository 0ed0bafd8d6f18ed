"""Machine judges' answers kept on disk, keyed by (judge fingerprint, question text, document text), so a
second pass over the same pairs (another file, a re-pooled set) asks the judge nothing.

SQLite (the standard library's) because each batch of answers must land whole or not at all and two
commands may share one cache folder: a transaction gives both, where an appended text file would not.
Only answers are kept: no header, no prompt text, no secret.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError, RetrievalEvalError
from retrieval_pipeline.core.retrieval.judges import Grade, MachineJudgement

FILE_NAME = "judgements.sqlite"
_SCHEMA = """CREATE TABLE IF NOT EXISTS answers (
    fingerprint TEXT NOT NULL, pair TEXT NOT NULL, relevant INTEGER NOT NULL, grade INTEGER,
    prompt_tokens INTEGER, completion_tokens INTEGER, PRIMARY KEY (fingerprint, pair))"""


class CacheNotWritten(RetrievalEvalError):
    """A batch of answers the cache could not keep (a full disk): the batch is not in it, the cache is as
    it was before the batch, and the caller decides what else to save and say."""


def pair_key(question: str, document: str) -> str:
    return hashlib.sha256(f"{len(question)}:{question}\0{document}".encode()).hexdigest()


class JudgementCache:
    """One judge's answers in `folder`; use as a context manager so the connection is closed."""

    def __init__(self, folder: Path, fingerprint: str):
        self.fingerprint = fingerprint
        self.folder = Path(folder)
        try:
            Path(folder).mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(Path(folder) / FILE_NAME, timeout=30)
            # A cache, not the record: the judging file is written durably; a power cut may cost the cache
            # its last batches (asked again), so commits need not wait for the disk (WAL, synchronous NORMAL).
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as error:
            raise InvalidInputError(f"cannot open the judgement cache: {error}", source=str(folder)) from None

    def __enter__(self) -> JudgementCache:
        return self

    def __exit__(self, *exc_info) -> None:
        self._db.close()

    def get(self, question: str, document: str) -> MachineJudgement | None:
        found = self._db.execute(
            "SELECT relevant, grade FROM answers WHERE fingerprint = ? AND pair = ?",
            (self.fingerprint, pair_key(question, document)),
        ).fetchone()
        if found is None:
            return None
        return MachineJudgement(bool(found[0]), None if found[1] is None else Grade(found[1]))

    def put_all(self, answers: Iterable[tuple[str, str, MachineJudgement]]) -> None:
        """One transaction: the batch is kept whole or, stopped midway or refused by the disk, not at all
        (CacheNotWritten)."""
        rows = [
            (
                self.fingerprint,
                pair_key(question, document),
                int(answer.relevant),
                None if answer.grade is None else answer.grade.value,
                answer.prompt_tokens,
                answer.completion_tokens,
            )
            for question, document, answer in answers
        ]
        if not rows:
            return
        try:
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?)", rows)
        except (OSError, sqlite3.Error) as error:  # "database or disk is full", "disk I/O error"
            raise CacheNotWritten(f"cannot write the judgement cache {self.folder} ({error})") from None
