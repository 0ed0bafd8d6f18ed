"""Where the result store's files are and how a path is shown: the paths a `ResultStore` holds, apart
from the file system that reads them.

A path is shown the same way everywhere (a path for a local store, a URI for a remote one, as any
Parquet reader would open it), so a message, a listing and the Dagster UI name a file alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from retrieval_pipeline.core.storage.store_names import COMPLETE_SUFFIX, HistoryKey, StoredRun

QUESTION_SETS_SIDE = "question_sets"
ACCEPTANCES_SIDE = "acceptances"


def is_local(uri: str) -> bool:
    return "://" not in uri or uri.startswith("file://")


@dataclass(frozen=True)
class StoreLocation:
    """The store's URI as its user named it and its root in the file system that URI opens."""

    uri: str
    root: str

    @property
    def local(self) -> bool:
        return is_local(self.uri)

    def folder(self, side: str, key: HistoryKey) -> str:
        """The key's folder on `side` (summaries, questions, acceptances)."""
        return f"{self.root}/{side}/{key.parts}"

    def run_files(self, stored: StoredRun) -> tuple[str, str]:
        """Where the run's summary and question file are, in the store's file system."""
        return (
            f"{self.folder('summaries', stored.key)}/{stored.file_name}",
            f"{self.folder('questions', stored.key)}/{stored.questions_name}",
        )

    def question_set_file(self, set_identifier: str) -> str:
        return f"{self.root}/{QUESTION_SETS_SIDE}/{set_identifier}{COMPLETE_SUFFIX}"

    def shown(self, path: str) -> str:
        """A path inside the store as a user or any Parquet reader would open it."""
        relative = path.removeprefix(f"{self.root}/")
        return f"{self.root if self.local else self.uri.rstrip('/')}/{relative}"
