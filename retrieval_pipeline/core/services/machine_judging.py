"""`retrieval-eval judge FILE --judge NAME`: a machine judge's answer for every row of a judging file, in the
row's own columns (`machine_judgement`, `machine_grade`, `judged_by`), never in the person's `judgement`.

Every row is queued at once, `concurrency` asked at a time; the answers are gathered in batches of a few
times the concurrency, and after each batch they go to the cache and the file is replaced whole
(`write_judging_file`) while the next rows are being asked. So Ctrl-C loses at most the answers of the
batch being gathered and the requests in flight, and running the command again skips every row this
judge (same fingerprint) already answered. A row the judge cannot answer (a reply without a grade, a
failing request) keeps what it held and is counted by cause; a judge whose first `fail_fast_after` rows
all fail to reach its service stops the pass.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from retrieval_pipeline.core.base.errors import ServiceFailedError
from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.core.retrieval.judges import Judge, MachineJudgement, document_text, judged_by
from retrieval_pipeline.core.retrieval.retriever import ANSWER_MARK, RetrieverFault, ServiceUnreachable
from retrieval_pipeline.core.services.judgement_cache import JudgementCache
from retrieval_pipeline.core.services.judging_files import NO, YES, numbered_judging_rows, read_judging_file, write_judging_file

if TYPE_CHECKING:
    from retrieval_pipeline.core.scoring.agreement import Agreement

BATCH_PER_WORKER = 4
NO_TEXT = "the row has no document title or text to judge (the pool's retrievers did not know the corpus)"
NO_QUESTION = "the row has no question text to judge"


@dataclass
class Tally:
    """What a pass did so far: read by the summary, and by the command when Ctrl-C stops it."""

    asked: int = 0
    cached: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reported: int = 0  # answers whose endpoint reported its tokens
    unreachable: int = 0  # rows whose service could not be reached
    failed: int = 0  # requests sent that brought no answer (asked counts those that did)
    saved: int = 0  # rows whose new answer is in the file

    def count(self, answer: MachineJudgement) -> None:
        self.asked += 1
        if answer.prompt_tokens is not None or answer.completion_tokens is not None:
            self.reported += 1
            self.prompt_tokens += answer.prompt_tokens or 0
            self.completion_tokens += answer.completion_tokens or 0


@dataclass(frozen=True)
class JudgingSummary:
    judged_by: str
    rows: int
    already: int  # skipped: answered by this judge in an earlier pass
    judged: int  # rows now carrying this judge's answer
    yes: int
    tally: Tally
    seconds: float

    @property
    def rows_per_second(self) -> float | None:
        return self.tally.asked / self.seconds if self.tally.asked and self.seconds > 0 else None

    @property
    def tokens_per_1000_rows(self) -> float | None:
        """Prompt plus reply tokens per 1,000 rows asked, from the answers whose endpoint reported usage."""
        reported = self.tally.reported
        return 1000 * (self.tally.prompt_tokens + self.tally.completion_tokens) / reported if reported else None

    def to_dict(self) -> dict[str, Any]:
        tally = self.tally
        rate, cost = self.rows_per_second, self.tokens_per_1000_rows
        return {
            "judged_by": self.judged_by,
            "rows": self.rows,
            "judged": self.judged,
            "yes": self.yes,
            "already_judged": self.already,
            "asked": tally.asked,
            "from_cache": tally.cached,
            "errors": sum(tally.errors.values()),
            "errors_by_cause": dict(tally.errors.most_common()),
            "prompt_tokens": tally.prompt_tokens if tally.reported else None,
            "completion_tokens": tally.completion_tokens if tally.reported else None,
            "tokens_per_1000_rows": None if cost is None else round(cost, 1),
            "rows_per_second": None if rate is None else round(rate, 2),
            "seconds": round(self.seconds, 3),
        }


def machine_judge_file(
    path: Path, judge: Judge, cache_folder: Path, tally: Tally | None = None, advance: Callable[[int], None] | None = None
) -> JudgingSummary:
    """Fill the machine columns of every row of `path` not yet answered by `judge`. `advance` is told of the
    rows already answered, then of each batch's; `tally` (the caller's, to report an interruption) counts
    as it goes."""
    started = time.monotonic()
    tally = tally if tally is not None else Tally()
    rows = read_judging_file(path)
    label = judged_by(judge.name, judge.fingerprint)
    pending = [row for row in rows if not (row.get("judged_by") == label and row.get("machine_judgement"))]
    size = max(1, judge.concurrency) * BATCH_PER_WORKER
    if advance is not None:
        advance(len(rows) - len(pending))
    pairs = [(row.get("question", ""), document_text(row.get("title", ""), row.get("text", ""))) for row in pending]
    workers = ThreadPoolExecutor(judge.concurrency, thread_name_prefix=f"judge {judge.name}")
    try:
        with JudgementCache(cache_folder, judge.fingerprint) as cache:
            # Every row is queued at once, so the workers go on asking while a batch is written.
            answers = submitted(judge, pairs, cache, tally, workers)
            for start in range(0, len(pending), size):
                batch = range(start, min(start + size, len(pending)))
                fresh = {index: collected(judge, answers[index], tally) for index in batch if isinstance(answers[index], Future)}
                answers.update(fresh)
                for index in batch:
                    if answers[index] is not None:
                        pending[index].update(machine_columns(answers[index], label))
                cache.put_all((*pairs[index], answer) for index, answer in fresh.items() if answer is not None)
                if fresh or start + size >= len(pending):  # cached answers survive a stop in the cache itself
                    write_judging_file(rows, path)
                    tally.saved = sum(answers[index] is not None for index in range(batch.stop))
                if advance is not None:
                    advance(len(batch))
    finally:  # Ctrl-C: the queued rows are dropped, not asked; only the requests in flight finish
        workers.shutdown(wait=False, cancel_futures=True)
    mine = [row for row in rows if row.get("judged_by") == label and row.get("machine_judgement")]
    yes = sum(1 for row in mine if row["machine_judgement"] == YES)
    return JudgingSummary(label, len(rows), len(rows) - len(pending), len(mine), yes, tally, time.monotonic() - started)


def machine_columns(answer: MachineJudgement, label: str) -> dict[str, Any]:
    return {
        "machine_judgement": YES if answer.relevant else NO,
        "machine_grade": None if answer.grade is None else answer.grade.value,
        "judged_by": label,
    }


def ask_all(
    judge: Judge, pairs: Sequence[tuple[str, str]], cache: JudgementCache, tally: Tally, workers: ThreadPoolExecutor
) -> list[MachineJudgement | None]:
    """Each pair's answer (None: an error, counted in `tally`), from the cache when it holds one, else asked
    `judge.concurrency` at a time; the new answers are cached in one transaction before returning."""
    answers = submitted(judge, pairs, cache, tally, workers)
    fresh = {index: collected(judge, future, tally) for index, future in answers.items() if isinstance(future, Future)}
    cache.put_all((*pairs[index], answer) for index, answer in fresh.items() if answer is not None)
    return [fresh.get(index, answers[index]) for index in range(len(pairs))]


def submitted(
    judge: Judge, pairs: Sequence[tuple[str, str]], cache: JudgementCache, tally: Tally, workers: ThreadPoolExecutor
) -> dict[int, MachineJudgement | Future | None]:
    """By position: the cached answer, the request queued on `workers`, or None for a pair without text."""
    answers: dict[int, MachineJudgement | Future | None] = {}
    for index, (question, document) in enumerate(pairs):
        if not question.strip() or not document.strip():
            tally.errors[NO_QUESTION if not question.strip() else NO_TEXT] += 1
            answers[index] = None
            continue
        answers[index] = cache.get(question, document)
        if answers[index] is not None:
            tally.cached += 1
        else:
            answers[index] = workers.submit(judge.judge, question, document)
    return answers


def collected(judge: Judge, future: Future, tally: Tally) -> MachineJudgement | None:
    """The request's answer, counted; None for a failure, counted by cause (and the pass stopped when the
    service is down from the start)."""
    try:
        answer = future.result()
    except RetrieverFault as fault:
        tally.errors[scrub(str(fault)).split(ANSWER_MARK, 1)[0]] += 1
        tally.failed += 1
        if isinstance(fault, ServiceUnreachable):
            tally.unreachable += 1
            _fail_fast(judge, tally, fault)
        return None
    tally.count(answer)
    return answer


def _fail_fast(judge: Judge, tally: Tally, fault: RetrieverFault) -> None:
    """No answer yet and `fail_fast_after` rows in a row that could not reach the service: it is down."""
    if judge.fail_fast_after and not tally.asked and tally.unreachable >= judge.fail_fast_after:
        raise ServiceFailedError(
            f"judge {judge.name}: the first {tally.unreachable} rows asked could not reach its service, stopped: {scrub(str(fault))}"
        )


def judge_agreement(path: Path, label: str) -> Agreement | None:
    """Cohen's kappa of one judge (`judged_by` label) with people, over the file's rows carrying both a
    person's and that judge's answer; None when no row does."""
    from retrieval_pipeline.core.scoring.agreement import kappa_agreement
    from retrieval_pipeline.core.services.calibration import answered_rows

    pairs = [
        (row.human, row.machine)
        for row in answered_rows(numbered_judging_rows(path))
        if row.judged_by == label and row.human is not None and row.machine is not None
    ]
    return kappa_agreement(pairs) if pairs else None
