"""A configuration as `list` shows it: each question set with its questions by form (and, read from a BEIR
folder, the judged queries it left out), and each retriever with the problem that keeps it from running
(checked as `run` checks it, no index built)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from retrieval_pipeline.core.base.errors import InvalidInputError, RetrievalEvalError
from retrieval_pipeline.core.base.secrets import scrub

if TYPE_CHECKING:
    from pathlib import Path

    from retrieval_pipeline.core.golden.query_logs import QueryLogSpec
    from retrieval_pipeline.core.services.configuration.project import ProjectConfig


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
    conversations: int | None = None
    """How many conversations its turns make; None for a set of single questions."""

    def to_dict(self) -> dict[str, Any]:
        """Its entry of the `list --json` document: `left_out` only where a set can leave queries out,
        `conversations` only where it has some."""
        document = asdict(self)
        for optional in ("left_out", "conversations"):
            if document[optional] is None:
                del document[optional]
        return document


@dataclass(frozen=True)
class ListedRetriever:
    identifier: str
    kind: str
    problem: str | None
    """Why it cannot be run (secrets scrubbed); None when it can."""
    query_mode: str = "current"
    """How it asks a conversation's turns (its `conversation:` key, query_modes.py)."""

    @property
    def status(self) -> str:
        return "problem" if self.problem else "ok"


@dataclass(frozen=True)
class ListedJudge:
    """A configured judge (or rewriter) as far as it can be shown: its model and endpoint host, never
    headers or the url's query (both may hold keys)."""

    identifier: str
    kind: str
    model: str | None
    host: str | None


@dataclass(frozen=True)
class ListedLog:
    """A configured query log's settings, never a query it holds."""

    identifier: str
    path: str
    format: str | None
    """None when neither `format:` nor the file's suffix names one (reading it would fail)."""
    examples: bool


@dataclass(frozen=True)
class ListingView:
    config_source: str
    store_uri: str
    question_sets: tuple[ListedSet, ...]
    retrievers: tuple[ListedRetriever, ...]
    judges: tuple[ListedJudge, ...] = ()
    query_logs: tuple[ListedLog, ...] = ()
    rewriters: tuple[ListedJudge, ...] = ()

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
                {"identifier": r.identifier, "kind": r.kind, "status": r.status, "problem": r.problem}
                | ({"query_mode": r.query_mode} if r.query_mode != "current" else {})
                for r in self.retrievers
            ],
            **({"judges": [asdict(judge) for judge in self.judges]} if self.judges else {}),
            **({"rewriters": [asdict(rewriter) for rewriter in self.rewriters]} if self.rewriters else {}),
            **({"query_logs": [asdict(log) for log in self.query_logs]} if self.query_logs else {}),
        }


def listing_view(config: ProjectConfig) -> ListingView:
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
            len(question_set.conversations) or None,
        )
        for identifier, question_set in sets.items()
    )
    retrievers = []
    for name, spec in config.retriever_specs.items():
        try:
            config.retriever_kind(name)
            problem = None
        except RetrievalEvalError as error:
            problem = scrub(str(error))
        retrievers.append(ListedRetriever(name, spec.kind, problem, spec.conversation.label))
    judges = tuple(_listed_judge(name, spec.kind, spec.params) for name, spec in config.judge_specs.items())
    logs = tuple(_listed_log(name, spec, config.resolve(spec.path)) for name, spec in config.query_logs.items())
    rewriters = tuple(_listed_judge(name, spec.kind, spec.params) for name, spec in config.rewriter_specs.items())
    return ListingView(config.source, config.store_uri, listed_sets, tuple(retrievers), judges, logs, rewriters)


def _listed_judge(name: str, kind: str, params: dict[str, Any]) -> ListedJudge:
    """Read from the parameters as written, so a judge whose secret is unset is still listed; a rerank
    judge's model or endpoint is its scorer's."""
    from urllib.parse import urlsplit

    scorer = params.get("scorer")
    shown = scorer if isinstance(scorer, dict) else params
    model, url = shown.get("model"), shown.get("url")
    host = urlsplit(url).netloc.rpartition("@")[2] if isinstance(url, str) else None
    return ListedJudge(name, kind, str(model) if model is not None else None, host or None)


def _listed_log(name: str, spec: QueryLogSpec, path: Path) -> ListedLog:
    try:
        log_format = spec.log_format(path)
    except InvalidInputError:
        log_format = None
    return ListedLog(name, str(path), log_format, spec.examples)
