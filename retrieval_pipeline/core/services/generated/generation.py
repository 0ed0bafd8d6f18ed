"""`retrieval-eval generate`: a generator's candidate questions, filtered, written in the judging-file shape
`pool` writes, so a person or a machine judge confirms them with the judge commands. The command and the
Dagster asset `generated_questions` both go through `planned_generation` (every refusal, nothing asked)
and then its `generate`.

Asking is machine judging's (`machine_judging.collected`): every request missing from the cache is queued
at once, `concurrency` at a time; the answers are gathered in batches of four times the concurrency and
go to the cache (`generated.cache`) batch by batch, and what a batch had gathered when Ctrl-C or a
failing generator stopped it too (on Ctrl-C, any later answer already back as well), so only the requests
in flight are lost, and running the command again asks only for the rest. Those are abandoned, not awaited
(`DaemonWorkers`): Ctrl-C stops the command at once, however long a request hangs. A request the
generator cannot answer is counted by cause; the others are still written.

Each kept candidate's rows: its source document first (the presumed answer, its `expected_document_ids`),
then every document in a configured retriever's top `depth` for it, each once; every row carries the
candidate's provenance (`core/golden/generated.py`) and its `form`, tagged by the set's rule
(`forms.tag_form` against the source document).
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from retrieval_pipeline.core.base.daemon_workers import DaemonWorkers
from retrieval_pipeline.core.base.errors import InvalidInputError, ServiceFailedError
from retrieval_pipeline.core.base.formatting import counted
from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.core.golden.forms import tag_form
from retrieval_pipeline.core.retrieval.generators import GeneratedQuestion, GenerationRequest, Generator
from retrieval_pipeline.core.retrieval.judges import JudgeFailed, judged_by
from retrieval_pipeline.core.retrieval.retriever import ANSWER_MARK, RetrieverFault
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.services.generated.cache import GenerationCache
from retrieval_pipeline.core.services.generated.filters import REASONS, duplicate_reasons, text_problem
from retrieval_pipeline.core.services.generated.plan import GenerationOrder, GenerationPlan, plan_generation
from retrieval_pipeline.core.services.generated.sources import Source
from retrieval_pipeline.core.services.labels.judging_files import SUFFIXES, answer_count, candidate_rows, write_judging_file
from retrieval_pipeline.core.services.labels.machine_judging import BATCH_PER_WORKER, Tally, collected
from retrieval_pipeline.core.services.labels.pooling import Candidate, corpus_texts, with_texts
from retrieval_pipeline.core.services.traffic.coverage import named_set
from retrieval_pipeline.core.services.traffic.sampling import ranked_candidates

GENERATED_PREFIX = "gen-"


@dataclass(frozen=True)
class GenerationSummary:
    generated_by: str
    planned: int  # requests the sources asked for
    written: int  # candidates in the file
    rows: int
    dropped: Mapping[str, int]
    tally: Tally
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        tally = self.tally
        return {
            "generated_by": self.generated_by,
            "requests": self.planned,
            **tally.requests(),
            "candidates": self.written,
            "rows": self.rows,
            "dropped": sum(self.dropped.values()),
            "dropped_by_reason": {reason: self.dropped.get(reason, 0) for reason in REASONS},
            **tally.tokens(),
            "seconds": round(self.seconds, 3),
        }


def generated_question_id(text: str, document_id: str) -> str:
    """`gen-<hash>` of the question and its source document: the same for the same candidate on every run."""
    return GENERATED_PREFIX + hashlib.sha256(f"{document_id}\0{text}".encode()).hexdigest()[:12]


def refuse_unfit_output(out: Path) -> None:
    """Before anything is asked: a file that is no judging file, or one people or a judge have started
    answering (writing the candidates over it would lose the answers)."""
    if out.suffix not in SUFFIXES:
        raise InvalidInputError(f"a judging file is {' or '.join(SUFFIXES)}", source=str(out))
    answered = answer_count(out) if out.exists() else 0
    if answered:
        raise InvalidInputError(
            f"holds {counted(answered, 'answer')} already: write the candidates to a file nobody has started answering",
            source=str(out),
        )


@dataclass(frozen=True)
class PlannedGeneration:
    """An order checked and planned, nothing asked yet: `plan.sources` says how many requests `generate` makes."""

    project: ProjectConfig
    order: GenerationOrder
    generator: Generator
    plan: GenerationPlan

    def generate(self, tally: Tally | None = None, advance: Callable[[int], None] | None = None) -> GenerationSummary:
        """Ask, filter and write the order's file; the plan's `similarity` is coverage's on the set's
        questions, its `threshold` the least similarity it counts as covered. `tally` is the caller's, to
        report an interruption."""
        started, tally, sources, generator = time.monotonic(), tally or Tally(), self.plan.sources, self.generator
        requests = [source.request() for source in sources]
        answers = ask_generator(generator, requests, self.project.generation_cache, tally, advance)
        label = judged_by(generator.name, generator.fingerprint)
        kept, dropped = _filtered(sources, answers, self.plan.similarity, self.plan.threshold)
        rows = _rows(self.project, kept, self.plan.retrievers, self.order.depth, label)
        write_judging_file(rows, self.order.out)
        return GenerationSummary(label, len(sources), len(kept), len(rows), dropped, tally, time.monotonic() - started)


def planned_generation(project: ProjectConfig, order: GenerationOrder) -> PlannedGeneration:
    """Every refusal before any request: an output that would lose answers, an unknown set or generator,
    then the plan's own (`plan_generation`)."""
    refuse_unfit_output(order.out)
    question_set = named_set(project, order.question_set)
    generator = project.generator(order.generator)
    return PlannedGeneration(project, order, generator, plan_generation(project, question_set, generator, order))


def ask_generator(
    generator: Generator,
    requests: Sequence[GenerationRequest],
    cache_folder: Path,
    tally: Tally,
    advance: Callable[[int], None] | None = None,
) -> list[GeneratedQuestion | None]:
    """Each request's question (None: an error, counted in `tally`), from the cache when it holds one."""
    with GenerationCache(cache_folder, generator.fingerprint) as cache:
        answers: dict[int, GeneratedQuestion | None] = {}
        for index, request in enumerate(requests):
            cached = cache.get(request)
            if cached is not None:
                answers[index] = cached
                tally.cached += 1
        if advance is not None:
            advance(len(answers))
        pending = [index for index in range(len(requests)) if index not in answers]
        # Ctrl-C or a stopped pass: the queued requests are dropped, not asked, and those in flight abandoned
        with DaemonWorkers(generator.concurrency, f"generator {generator.name}") as workers:
            futures = {index: workers.submit(generator.generate, requests[index]) for index in pending}
            size = max(1, generator.concurrency) * BATCH_PER_WORKER
            try:
                for start in range(0, len(pending), size):
                    batch = pending[start : start + size]
                    _gathered(generator, batch, futures, requests, cache, tally, answers)
                    if advance is not None:
                        advance(len(batch))
            except JudgeFailed as failure:  # the generator's own code asked to end the process
                raise ServiceFailedError(
                    f"generator {generator.name} stopped: {failure}; the {tally.saved} question(s) it wrote in this pass "
                    "are cached; run the same command again to resume"
                ) from None
            except KeyboardInterrupt:
                _keep_answered(futures, answers, requests, cache, tally)
                raise
    return [answers.get(index) for index in range(len(requests))]


def _gathered(generator: Generator, batch, futures, requests, cache: GenerationCache, tally: Tally, answers: dict) -> None:
    """The batch's questions into `answers` by position, cached as one transaction even when Ctrl-C or a
    failing generator stops the gathering midway: what came back before is kept."""
    fresh: dict[int, GeneratedQuestion | None] = {}
    try:
        for index in batch:
            fresh[index] = collected(generator, futures[index], tally, "generator", "requests")
    finally:
        answers.update(fresh)
        kept = [(requests[index], answer) for index, answer in fresh.items() if answer is not None]
        cache.put_all(kept)
        tally.saved += len(kept)


def _keep_answered(futures, answers: dict, requests, cache: GenerationCache, tally: Tally) -> None:
    """On Ctrl-C, the questions that had come back beyond those gathered (a later request may finish
    first), cached too: every question paid for is kept."""
    late = [
        (requests[index], future.result())
        for index, future in futures.items()
        if index not in answers and future.done() and not future.cancelled() and future.exception() is None
    ]
    cache.put_all(late)
    tally.saved += len(late)


def _filtered(sources: Sequence[Source], answers: Sequence[GeneratedQuestion | None], similarity, threshold: float):
    """(source, question text) of the candidates kept, and the dropped ones counted by reason."""
    dropped: Counter[str] = Counter()
    passed: list[tuple[Source, str]] = []
    for source, answer in zip(sources, answers):
        if answer is None:
            continue
        problem = text_problem(answer.text, f"{source.title} {source.text}")
        if problem:
            dropped[problem] += 1
        else:
            passed.append((source, answer.text))
    reasons = duplicate_reasons(similarity, [text for _, text in passed], threshold)
    dropped.update(reason for reason in reasons if reason)
    return [candidate for candidate, reason in zip(passed, reasons) if not reason], dropped


def _rows(project: ProjectConfig, kept: Sequence[tuple[Source, str]], retrievers: Sequence[str], depth: int, label: str):
    candidates: list[Candidate] = []
    columns: dict[str, dict[str, Any]] = {}
    for source, text in kept:
        question_id = generated_question_id(text, source.document_id)
        try:
            ranked = ranked_candidates(project, retrievers, question_id, text, depth)
        except RetrieverFault as fault:
            cause = scrub(str(fault)).split(ANSWER_MARK, 1)[0]
            raise ServiceFailedError(
                f"a retriever failed on generated question {question_id} ({cause}); the generator's questions are cached: "
                "run the same command again once the retriever answers"
            ) from None
        own = next((candidate for candidate in ranked if candidate.document_id == source.document_id), None)
        own = own or Candidate(question_id, text, (), (), source.document_id, ())
        rows = [own, *(candidate for candidate in ranked if candidate is not own)]
        candidates.extend(replace(candidate, expected_document_ids=(source.document_id,)) for candidate in rows)
        form = tag_form(text, [f"{source.title} {source.text}"])
        columns[question_id] = {**source.provenance(label).columns(), "form": form}
    texted = with_texts(candidates, lambda wanted: corpus_texts(project, wanted, retrievers))
    return [{**row, **columns[row["question_id"]]} for row in candidate_rows(texted)]
