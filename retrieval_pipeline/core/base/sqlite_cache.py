"""Answers paid for (a machine judge's, a generator's) kept on disk in SQLite, keyed by what asked them.

SQLite (the standard library's) because each batch of answers must land whole or not at all and two
commands may share one cache folder: a transaction gives both, where an appended text file would not. A
cache, not the record: commits use write-ahead logging without waiting for the disk (a power cut costs
its last batches, asked again). A cache file the disk damaged, or a disk that will not take a batch, is
one clear error naming the file, never an internal error.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from retrieval_pipeline.core.base.errors import InvalidInputError, RetrievalEvalError, clip

T = TypeVar("T")


class CacheNotWritten(RetrievalEvalError):
    """A batch of answers the cache could not keep (a full disk): the batch is not in it, the cache is as
    it was before the batch, and the caller decides what else to save and say."""


class SqliteCache:
    """One asker's answers (`fingerprint`) in `folder`; use as a context manager so the connection is closed.
    A kind names its file, its table (`schema`) and itself (`what`, as messages say it)."""

    file_name: str
    schema: str
    what: str

    def __init__(self, folder: Path, fingerprint: str):
        self.fingerprint = fingerprint
        self.folder = Path(folder)
        self.location = self.folder / self.file_name
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.location, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(self.schema)
        except (OSError, sqlite3.Error) as error:
            raise InvalidInputError(f"cannot open the {self.what}: {error}", source=str(folder)) from None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self._db.close()

    def _value(self, sql: str, parameters: Sequence, value: Callable[[tuple], T]) -> T | None:
        """The row found made a value by `value`, None when there is none. A row it refuses (a question kept
        as a BLOB, a grade of 7: written by something else) is damage, as a malformed file is."""
        try:
            row = self._db.execute(sql, parameters).fetchone()
            return None if row is None else value(row)
        except (sqlite3.DatabaseError, ValueError) as error:  # "database disk image is malformed": damaged past its header
            raise InvalidInputError(
                f"cannot read the {self.what} ({clip(str(error))}); delete it to start afresh (its answers are then asked again)",
                source=str(self.location),
            ) from None

    def _write(self, sql: str, rows: Sequence[tuple]) -> None:
        """One transaction: the batch is kept whole or, stopped midway or refused by the disk, not at all
        (CacheNotWritten)."""
        if not rows:
            return
        try:
            with self._db:
                self._db.executemany(sql, rows)
        except (OSError, sqlite3.Error) as error:  # "database or disk is full", "disk I/O error", malformed
            raise CacheNotWritten(f"cannot write the {self.what} {self.folder} ({error})") from None
