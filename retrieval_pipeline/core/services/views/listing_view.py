"""A configuration as `list` shows it: each question set with its questions by form (and, read from a BEIR
folder, the judged queries it left out), and each retriever with the problem that keeps it from running
(checked as `run` checks it, no index built)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from retrieval_pipeline.core.services.config import ProjectConfig


@dataclass(frozen=True)
class ListedSet:
    identifier: str
    name: str
    question_count: int
    by_form: dict[str, int]
    by_hard_class: dict[str, int]
    source: str
    left_out: tuple[str, ...] | None = None
    """A set read from a BEIR folder: the queries judged only not relevant, left out. None for any other set."""

    def to_dict(self) -> dict[str, Any]:
        """Its entry of the `list --json` document: `left_out` only where a set can leave queries out."""
        document = asdict(self)
        if self.left_out is None:
            del document["left_out"]
        return document


@dataclass(frozen=True)
class ListedRetriever:
    identifier: str
    kind: str
    problem: str | None
    """Why it cannot be run (secrets scrubbed); None when it can."""

    @property
    def status(self) -> str:
        return "problem" if self.problem else "ok"


@dataclass(frozen=True)
class ListingView:
    config_source: str
    store_uri: str
    question_sets: tuple[ListedSet, ...]
    retrievers: tuple[ListedRetriever, ...]

    @property
    def problems(self) -> tuple[str, ...]:
        return tuple(retriever.problem for retriever in self.retrievers if retriever.problem)

    def to_dict(self) -> dict[str, Any]:
        """The `retrieval-eval list --json` document."""
        return {
            "config": self.config_source,
            "store": self.store_uri,
            "question_sets": [listed.to_dict() for listed in self.question_sets],
            "retrievers": [
                {"identifier": r.identifier, "kind": r.kind, "status": r.status, "problem": r.problem} for r in self.retrievers
            ],
        }


def listing_view(config: ProjectConfig) -> ListingView:
    from retrieval_pipeline.core.base.errors import RetrievalEvalError
    from retrieval_pipeline.core.base.secrets import scrub

    sets = config.question_sets
    listed_sets = tuple(
        ListedSet(
            identifier,
            question_set.name,
            len(question_set.questions),
            question_set.counts_by_form(),
            question_set.counts_by_hard_class(),
            sets.source_of(identifier),
            config.set_left_out(identifier),
        )
        for identifier, question_set in sets.items()
    )
    retrievers = []
    for name, spec in config.retriever_specs.items():
        try:
            config.check_retriever(name)
            problem = None
        except RetrievalEvalError as error:
            problem = scrub(str(error))
        retrievers.append(ListedRetriever(name, spec.kind, problem))
    return ListingView(config.source, config.store_uri, listed_sets, tuple(retrievers))
