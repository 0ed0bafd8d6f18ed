"""Machine judges' answers kept on disk, keyed by (judge fingerprint, question text, document text), so a
second pass over the same pairs (another file, a re-pooled set) asks the judge nothing.

Only answers are kept (sqlite_cache.py): no header, no prompt text, no secret.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from retrieval_pipeline.core.base.sqlite_cache import SqliteCache
from retrieval_pipeline.core.retrieval.judges import Grade, MachineJudgement

FILE_NAME = "judgements.sqlite"
_SCHEMA = """CREATE TABLE IF NOT EXISTS answers (
    fingerprint TEXT NOT NULL, pair TEXT NOT NULL, relevant INTEGER NOT NULL, grade INTEGER,
    prompt_tokens INTEGER, completion_tokens INTEGER, PRIMARY KEY (fingerprint, pair))"""


def pair_key(question: str, document: str) -> str:
    return hashlib.sha256(f"{len(question)}:{question}\0{document}".encode()).hexdigest()


class JudgementCache(SqliteCache):
    """One judge's answers in `folder`; use as a context manager so the connection is closed."""

    file_name, schema, what = FILE_NAME, _SCHEMA, "judgement cache"

    def get(self, question: str, document: str) -> MachineJudgement | None:
        return self._value(
            "SELECT relevant, grade FROM answers WHERE fingerprint = ? AND pair = ?",
            (self.fingerprint, pair_key(question, document)),
            lambda row: MachineJudgement(bool(row[0]), None if row[1] is None else Grade(row[1])),
        )

    def put_all(self, answers: Iterable[tuple[str, str, MachineJudgement]]) -> None:
        """One transaction (CacheNotWritten when the disk refuses it)."""
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
        self._write("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?)", rows)
