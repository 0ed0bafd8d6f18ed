"""Where the result store's files are and how they are shown: the part of `ResultStore` that both its
reading and its writing side stand on.

A path is shown the same way everywhere (a path for a local store, a URI for a remote one, as any
Parquet reader would open it), an unreachable store is one StoreError naming its URI, and a file that
cannot be read is reported once, through `on_skip`, however many sides meet it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from retrieval_pipeline.core.base.errors import StoreError
from retrieval_pipeline.core.storage.store_files import UnreadableFile, checked_summary, file_system, read_table
from retrieval_pipeline.core.storage.store_names import HistoryKey, SkippedFile, StoredRun

LOG = logging.getLogger("retrieval_pipeline.core.storage.store")  # the store's channel, named as users configure it


def log_skipped(skipped: SkippedFile) -> None:
    """The default channel: callers that show warnings themselves (the command line, Dagster) pass theirs."""
    LOG.warning("%s", skipped)


class StoreLocation:
    """The store's root in its file system, its folders per side and key, and the one report per skipped file."""

    def __init__(self, uri: str, on_skip: Callable[[SkippedFile], None] | None = None):
        self.uri = uri
        self._local = "://" not in uri or uri.startswith("file://")
        self.fs, self._root = file_system(uri, self._local)
        self._on_skip = on_skip or log_skipped
        self._reported: set[str] = set()

    def run_files(self, stored: StoredRun) -> tuple[str, str]:
        """Where the run's summary and question file are, in the store's file system."""
        return (
            f"{self._dir('summaries', stored.key)}/{stored.file_name}",
            f"{self._dir('questions', stored.key)}/{stored.questions_name}",
        )

    def questions_uri(self, stored: StoredRun) -> str:
        return self._uri(f"questions/{stored.key.parts}/{stored.questions_name}")

    def summary_uri(self, stored: StoredRun) -> str:
        return self._uri(f"summaries/{stored.key.parts}/{stored.file_name}")

    def shown(self, path: str) -> str:
        """A path inside the store as a user or any Parquet reader would open it."""
        return self._uri(path.removeprefix(f"{self._root}/"))

    def skip(self, path: str, reason: str) -> None:
        """Report a file passed over, once per store object however often it is met."""
        if path not in self._reported:
            self._reported.add(path)
            self._on_skip(SkippedFile(self.shown(path), reason))

    def entries(self, side: str, key: HistoryKey) -> list:
        """The files and folders in the key's folder on `side` (summaries, questions); none before its first run."""
        return self._listing(self._dir(side, key))

    def _summary_table(self, stored: StoredRun):
        path = self.run_files(stored)[0]
        return checked_summary(read_table(self.fs, path), stored, path)

    def _dir(self, side: str, key: HistoryKey) -> str:
        return f"{self._root}/{side}/{key.parts}"

    def _uri(self, relative: str) -> str:
        """Where a stored file is, as a reader would open it: a path for a local store, else a URI."""
        return f"{self._root if self._local else self.uri.rstrip('/')}/{relative}"

    def _failure(self, error: UnreadableFile) -> StoreError:
        return StoreError(f"cannot read {self.shown(error.path)}: {error.reason}")

    def _listing(self, folder: str) -> list:
        """The files and folders directly in `folder`; none when it does not exist yet."""
        from pyarrow.fs import FileSelector

        try:
            return self.fs.get_file_info(FileSelector(folder, allow_not_found=True))
        except OSError as error:
            raise StoreError(f"cannot read the result store {self.uri!r}: {error}") from None
