"""The result store's root in its file system: how every side of the store reaches, shows and skips files.

Runs, acceptances, question sets and retention all reach their files through this one object, so a
path is shown the same way everywhere (a path for a local store, a URI for a remote one, as any Parquet
reader would open it), an unreachable store is one StoreError naming its URI, and a file that cannot be
read (empty, truncated, foreign) is reported once, through `on_skip`, however many sides meet it.
What the files mean is `store.ResultStore`'s.
"""

from __future__ import annotations

from collections.abc import Callable

from retrieval_pipeline.core.base.errors import StoreError
from retrieval_pipeline.core.storage.store_files import UnreadableFile, file_system, write_table
from retrieval_pipeline.core.storage.store_layout import HistoryKey, SkippedFile


class StoreRoot:
    def __init__(self, uri: str, on_skip: Callable[[SkippedFile], None]):
        self.uri = uri
        self._local = "://" not in uri or uri.startswith("file://")
        self.fs, self._root = file_system(uri, self._local)
        self._on_skip = on_skip
        self._reported: set[str] = set()

    def _dir(self, side: str, key: HistoryKey) -> str:
        return f"{self._root}/{side}/{key.parts}"

    def _uri(self, relative: str) -> str:
        """Where a stored file is, as a reader would open it: a path for a local store, else a URI."""
        return f"{self._root if self._local else self.uri.rstrip('/')}/{relative}"

    def shown(self, path: str) -> str:
        """A path inside the store as a user or any Parquet reader would open it."""
        return self._uri(path.removeprefix(f"{self._root}/"))

    def skip(self, path: str, reason: str) -> None:
        """Report a file passed over, once per store object however often it is met."""
        if path not in self._reported:
            self._reported.add(path)
            self._on_skip(SkippedFile(self.shown(path), reason))

    def _failure(self, error: UnreadableFile) -> StoreError:
        return StoreError(f"cannot read {self.shown(error.path)}: {error.reason}")

    def _write(self, path: str, table) -> None:
        write_table(self.fs, self._local, path, table, self.shown(path))

    def entries(self, side: str, key: HistoryKey) -> list:
        """The files and folders in the key's folder on `side` (summaries, questions); none before its first run."""
        return self._listing(self._dir(side, key))

    def delete(self, path: str) -> None:
        """A file already gone (a concurrent prune) is not an error."""
        try:
            self.fs.delete_file(path)
        except FileNotFoundError:
            return
        except OSError as error:
            raise StoreError(f"cannot remove {self.shown(path)}: {error}") from None

    def _listing(self, folder: str) -> list:
        """The files and folders directly in `folder`; none when it does not exist yet."""
        from pyarrow.fs import FileSelector

        try:
            return self.fs.get_file_info(FileSelector(folder, allow_not_found=True))
        except OSError as error:
            raise StoreError(f"cannot read the result store {self.uri!r}: {error}") from None
