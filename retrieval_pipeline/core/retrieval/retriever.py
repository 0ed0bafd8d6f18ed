"""The retriever contract: deliberately minimal so any pipeline can be measured.

A kind is a `RetrieverKind` (retriever_kinds.py) registered under the entry-point group
`retrieval_pipeline.retrievers`; the project configuration names instances of kinds, each parsed once into
its kind, whose `build()` makes the retriever this module describes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from retrieval_pipeline.core.retrieval.approximation import Approximation

if TYPE_CHECKING:
    from retrieval_pipeline.core.golden.question_sets import QuestionSetRegistry

RETRIEVER_KINDS_GROUP = "retrieval_pipeline.retrievers"


class RetrieverFault(Exception):
    """A failure retrying cannot mend: a malformed answer, or an adapter that already retried itself.

    The runner records it on the question at once instead of asking again.
    """


ANSWER_MARK = "; answer: "
"""An error text may end with what the service answered after this mark (a response body, which differs
from question to question): a run's failures are grouped by the text before it, and one answer quoted."""


@runtime_checkable
class CountsRetries(Protocol):
    """Optional: the retries an adapter made itself since the last call, by cause (a status and an
    endpoint, no body), so a run reports one line per cause instead of one per retry."""

    def retries(self) -> Mapping[str, int]: ...


class ServiceUnreachable(RetrieverFault):
    """The service could not be reached at all (refused, unresolvable, no connection in time).

    Unlike a bad answer, it says nothing about the question: when the first questions of a run all end
    like this, the runner stops instead of waiting out every remaining question's retries.
    """


@runtime_checkable
class Retriever(Protocol):
    """Ranked document ids for a question, best first; duplicates allowed (one id per chunk)."""

    identifier: str

    def retrieve(self, question: str, limit: int) -> Sequence[str]: ...


ChatMessages = Sequence[Mapping[str, str]]
"""A conversation as chat messages, `{"role": "user" | "assistant", "content": ...}`, oldest first."""


@runtime_checkable
class ConversationalRetriever(Protocol):
    """Optional: a retriever that receives the conversation before a turn (its earlier utterances and the
    replies the set records, as chat messages; empty for a single question or an opening turn) beside the
    query the retriever's `conversation:` mode made (query_modes.py), so a service can read the history
    itself. The runner then asks it one question at a time, by this method instead of `retrieve`."""

    def retrieve_in_conversation(self, question: str, history: ChatMessages, limit: int) -> Sequence[str]: ...


@runtime_checkable
class BatchRetriever(Protocol):
    """Optional: many questions in one call, for retrievers that vectorise (BM25) or fan out.

    The rankings may come back as a pyarrow list<string> array, one list per question, when they are a
    table already (a run file's): the runner then scores them without a Python step per question.
    """

    def retrieve_batch(self, questions: Sequence[str], limit: int) -> Sequence[Sequence[str]]: ...


def batch_as_lists(rankings: Sequence[Sequence[str]]) -> Sequence[Sequence[str]]:
    """A `retrieve_batch` answer as Python lists, whichever form it came in."""
    to_pylist = getattr(rankings, "to_pylist", None)
    return rankings if to_pylist is None else to_pylist()


@runtime_checkable
class VersionedIndex(Protocol):
    """Optional: the version of the index served, so a rebuild can trigger an evaluation."""

    def index_version(self) -> str: ...


@runtime_checkable
class ConcurrentRetriever(Protocol):
    """Optional: how many questions may be asked at once (remote services)."""

    concurrency: int


@runtime_checkable
class FailFast(Protocol):
    """Optional: after how many leading unreachable-service failures the run stops (0: never)."""

    fail_fast_after: int


@runtime_checkable
class BuildReport(Protocol):
    """Optional: what building did (documents, cache hit or miss, seconds spent), shown with the retriever.

    Plain values only (text, integers, floats, booleans), so a front end shows them without knowing the kind.
    """

    def build_report(self) -> Mapping[str, str | int | float | bool]: ...


@runtime_checkable
class ApproximateSearch(Protocol):
    """Optional: a retriever that may search approximately says so, measured on the run's questions (their
    texts in the set's order): None when its search is exact (see approximation.py)."""

    def approximation(self, questions: Sequence[str]) -> Approximation | None: ...


def document_id_from_chunk(chunk_id: str, separator: str = "_") -> str:
    """Chunk-grained stores label chunks `<document>_<n>`; labels are documents, so keep the prefix."""
    head, found, _ = chunk_id.rpartition(separator)
    return head if found and head else chunk_id


@dataclass(frozen=True)
class BuildContext:
    """What a kind may need beyond its own parameters, supplied by the configuration that names it."""

    base_dir: Path
    source: str
    load_question_sets: Callable[[], QuestionSetRegistry] | None = None
    cache_dir: Path = field(default_factory=lambda: default_cache_dir())
    build_retriever: Callable[[str], Retriever] | None = None
    fetch_limit: int | None = None  # documents per question the evaluation asks for; None: not known
    known_retrievers: Collection[str] | None = None  # the configuration's retrievers, for kinds naming others
    progress: Callable[[str], None] | None = None  # told how a long build goes ("encoded 300/1400 documents")
    vector_cache: str | None = None  # document vectors' folder or fsspec URI (s3://...); None: cache_dir/dense

    def report(self, message: str) -> None:
        if self.progress is not None:
            self.progress(message)

    @property
    def vector_location(self) -> Path | str:
        """Where document vectors are cached: a local folder, or a URI that shard workers share."""
        return self.vector_cache if self.vector_cache is not None else self.cache_dir / "dense"

    def resolve(self, path: str | Path) -> Path:
        candidate = Path(path).expanduser()
        return candidate if candidate.is_absolute() else (self.base_dir / candidate)


def default_cache_dir() -> Path:
    """Built indexes are reused across runs and processes, so they live outside any one run."""
    explicit = os.environ.get("RETRIEVAL_EVAL_CACHE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "retrieval-eval"
