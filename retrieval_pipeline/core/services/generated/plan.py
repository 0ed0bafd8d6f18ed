"""What `generate` will ask, settled before anything is asked: what was ordered (`GenerationOrder`, as
the command and the Dagster asset take it), the sources (`sources`), the forms, the retrievers, and
coverage's similarity that filters near-duplicates. Every refusal (a form the
generator cannot write, example texts from a log that does not allow them, no log to draw from, a missing
extra) happens here, so bad input costs no request.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.extras import missing_extra
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.retrieval.generators import Generator
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.services.generated.sources import (
    Source,
    cluster_sources,
    corpus_sources,
    reached_documents,
)
from retrieval_pipeline.core.services.traffic.coverage import CLUSTERING_MODULES, measure_coverage, read_log, similarity_for


@dataclass(frozen=True)
class GenerationOrder:
    """`log` defaults to the set's `traffic:` log; `retrievers` to every configured one; `examples` None
    sends a cluster's queries where the log allows them, True requires that it does, False never sends them."""

    question_set: str
    """A configured set, or the path of a set file."""
    generator: str
    count: int
    out: Path
    origin: Literal["log", "corpus"] = "log"
    log: str | None = None
    form: str | None = None
    retrievers: tuple[str, ...] = ()
    depth: int = 10
    seed: int = 0
    examples: bool | None = None


@dataclass(frozen=True)
class GenerationPlan:
    sources: tuple[Source, ...]
    similarity: Any
    threshold: float
    retrievers: tuple[str, ...]
    log: str | None
    clusters: int  # the log's uncovered clusters (0 from the corpus)


def plan_generation(
    project: ProjectConfig, question_set: GoldenQuestionSet, generator: Generator, order: GenerationOrder
) -> GenerationPlan:
    count, depth, examples = order.count, order.depth, order.examples
    missing = missing_extra(CLUSTERING_MODULES, "coverage")
    if missing:
        raise InvalidInputError(
            f"generate clusters traffic and finds near-duplicates as coverage does, with scikit-learn; {missing}"
        )
    if count < 1:
        raise InvalidInputError(f"the count of questions to generate must be at least 1, got {count}", field="count")
    names = order.retrievers or tuple(project.retriever_identifiers)
    if not names:
        raise InvalidInputError(
            "no retriever is configured to rank documents beside the generated questions", source=project.source
        )
    for name in names:
        project.retriever(name)  # an unknown or broken retriever is refused before any request
    gap_share = _gap_share(question_set, generator, order.form)
    log = order.log or project.set_traffic(question_set.identifier)
    if order.origin == "corpus":
        if examples:
            raise InvalidInputError("--examples goes with --from log: documents of the corpus have no users' queries")
        counts = read_log(project, log) if log else None
        reached = reached_documents(project, counts, names, depth) if counts else set()
        similarity = similarity_for(project, question_set)
        sources = corpus_sources(project, question_set, reached, count, gap_share, names, order.seed)
        return GenerationPlan(tuple(sources), similarity, _threshold(project, similarity), names, log, 0)
    if log is None:
        raise InvalidInputError(
            "--from log needs a LOG (a query_logs name or a log file), or a set whose entry names traffic: LOG"
        )
    coverage = measure_coverage(project, question_set, log)
    if examples and not coverage.log.examples:
        raise InvalidInputError(
            "--examples sends the logged queries' text to the generator: allow it with examples: true on the log's entry",
            source=project.source,
            key=f"query_logs.{log}",
            field="examples",
        )
    send = coverage.log.examples if examples is None else examples
    sources = cluster_sources(project, coverage, log, count, gap_share, names, depth, send)
    similarity = similarity_for(project, question_set)
    return GenerationPlan(tuple(sources), similarity, coverage.threshold, names, log, len(coverage.clusters))


def _gap_share(question_set: GoldenQuestionSet, generator: Generator, form: str | None) -> float:
    """The share of `gap` to ask for: the form named, else the set's own mix of forms, within what the
    generator writes."""
    if form is not None:
        if form not in generator.forms:
            raise InvalidInputError(
                f"generator {generator.name} writes {' and '.join(generator.forms)} questions only; it cannot be asked for {form}",
                field="form",
            )
        return 1.0 if form == "gap" else 0.0
    if "gap" not in generator.forms:
        return 0.0
    if "match" not in generator.forms:
        return 1.0
    questions = question_set.questions
    return sum(question.form.value == "gap" for question in questions) / len(questions)


def _threshold(project: ProjectConfig, similarity) -> float:
    """As coverage assigns queries: `coverage.threshold`, else the method's calibrated default."""
    return project.coverage.threshold if project.coverage.threshold is not None else similarity.default_threshold
