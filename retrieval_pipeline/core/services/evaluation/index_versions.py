"""Which retrievers report a new index version, and which sets to evaluate against it (the Dagster
index-version sensor's decision, made here from the configuration and the store).

`seen` holds the version last acted on per retriever. A retriever seen for the first time (the sensor was
just turned on) has a new version unless the store already holds a complete run made against that very
version: turning the sensor on right after `retrieval-eval nightly` then asks for nothing, while a
never-measured index is measured at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.core.retrieval.retriever import VersionedIndex
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.services.evaluation.leaderboard import latest_entry
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore


@dataclass(frozen=True)
class NewIndexVersion:
    retriever_identifier: str
    version: str
    set_identifiers: tuple[str, ...]


def new_index_versions(
    config: ProjectConfig,
    pairs: tuple[Sequence[str], Sequence[str]],
    store: Callable[[], ResultStore],
    seen: Mapping[str, str],
    warn: Callable[[str], None],
) -> tuple[list[NewIndexVersion], dict[str, str]]:
    """The new versions with the sets still to evaluate, and `seen` updated; `pairs` are the sets and the
    retrievers watched (the partitions the code location loaded). A retriever whose version cannot be read
    is warned about and skipped: one broken retriever must not stop the others being watched."""
    set_identifiers, retriever_identifiers = pairs
    seen = dict(seen)
    found = []
    for identifier in retriever_identifiers:
        try:
            retriever = config.retriever(identifier)
            if not isinstance(retriever, VersionedIndex):
                continue
            version = str(retriever.index_version())
        except Exception as error:
            warn(f"retriever '{identifier}': cannot read its index version: {scrub(str(error))}")
            continue
        if seen.get(identifier) == version:
            continue
        sets = tuple(set_identifiers)
        if identifier not in seen:
            opened = store()
            sets = tuple(s for s in sets if not _measured_at(opened, s, identifier, version))
        seen[identifier] = version
        if sets:
            found.append(NewIndexVersion(identifier, version, sets))
    return found, seen


def _measured_at(store: ResultStore, set_identifier: str, retriever_identifier: str, version: str) -> bool:
    entry = latest_entry(store, HistoryKey(set_identifier, retriever_identifier))
    return entry is not None and entry.summary.index_version == version
