"""`retrieval-eval judge FILE --judge NAME`: a machine judge's answer for every row of a judging file, in the
row's own columns (`machine_judgement`, `machine_grade`, `judged_by`), never in the person's `judgement`.

Every row is queued at once, `concurrency` asked at a time; the answers are gathered in batches of a few
times the concurrency, and after each batch they go to the answer cache, the pass's journal, while the
next rows are being asked. The file is replaced whole (`write_judging_file`) once: at the end, when the
pass stops, and on Ctrl-C, so saving progress costs the same whatever the file's size. So Ctrl-C loses at
most the answers of the batch being gathered and the requests in flight (and a killed pass's answers are
in the cache), and running the command again skips every row this judge (same fingerprint) already
answered, taking the cached answers unasked. A row the judge cannot answer (a reply without a grade, a
failing request) keeps what it held and is counted by cause; a judge whose first `fail_fast_after` rows
all fail to reach its service stops the pass.

A pass that cannot go on (the judge itself failed: its function called `sys.exit`; or a batch could not
be saved: the cache or the file refused by a full disk) first saves what it can of the batch in hand, to
the cache and to the file, each tried whatever the other did, then stops with one ServiceFailedError
(exit 3) saying how many rows carry the judge's answer in the file, how many answers are only in the
cache (a rerun takes them from there, unasked), and how many are still to get. Answers already paid for
are never dropped unsaid.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from retrieval_pipeline.core.base.errors import InvalidInputError, ServiceFailedError
from retrieval_pipeline.core.base.formatting import counted
from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.core.base.sqlite_cache import CacheNotWritten
from retrieval_pipeline.core.retrieval.judges import Judge, JudgeFailed, MachineJudgement, document_text, judged_by
from retrieval_pipeline.core.retrieval.retriever import ANSWER_MARK, RetrieverFault, ServiceUnreachable
from retrieval_pipeline.core.scoring.stats.agreement import kappa_agreement
from retrieval_pipeline.core.services.labels.calibration import answered_rows
from retrieval_pipeline.core.services.labels.judgement_cache import JudgementCache
from retrieval_pipeline.core.services.labels.judging_files import (
    NO,
    YES,
    judged_question,
    numbered_judging_rows,
    read_judging_file,
    write_judging_file,
)

if TYPE_CHECKING:
    from retrieval_pipeline.core.scoring.stats.agreement import Agreement

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

    def requests(self) -> dict[str, Any]:
        """How the answers came (asked, from the cache, failed by cause), as `--json` says it."""
        return {
            "asked": self.asked,
            "from_cache": self.cached,
            "errors": sum(self.errors.values()),
            "errors_by_cause": dict(self.errors.most_common()),
        }

    def tokens(self) -> dict[str, int | None]:
        """What the endpoint said the answers cost; None where it reported nothing."""
        return {
            "prompt_tokens": self.prompt_tokens if self.reported else None,
            "completion_tokens": self.completion_tokens if self.reported else None,
        }


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
            **tally.requests(),
            **tally.tokens(),
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
    pairs = [(judged_question(row), document_text(row.get("title", ""), row.get("text", ""))) for row in pending]
    workers = ThreadPoolExecutor(judge.concurrency, thread_name_prefix=f"judge {judge.name}")
    try:
        with JudgementCache(cache_folder, judge.fingerprint) as cache:
            # Every row is queued at once, so the workers go on asking while a batch is written.
            answers = submitted(judge, pairs, cache, tally, workers)
            saving = _Saving(rows, pending, pairs, answers, label, path, cache, tally)
            try:
                for start in range(0, len(pending), size):
                    batch = range(start, min(start + size, len(pending)))
                    fresh, failure, reached = gathered(judge, answers, batch, tally)
                    saving.save(batch, fresh, write=failure is not None or batch.stop == len(pending))
                    if advance is not None:
                        advance(len(batch))
                    if failure or saving.problems:
                        workers.shutdown(wait=True, cancel_futures=True)  # the queued rows dropped, those in flight finish
                        late = range(reached, len(pending))
                        saving.save(late, finished(answers, late, tally), write=True)  # answers paid for, kept if possible
                        raise ServiceFailedError(saving.stopped(judge.name, failure, reached))
            except KeyboardInterrupt:
                saving.write()  # the batches gathered before the one in flight, into the file as the cache has them
                raise
    finally:  # Ctrl-C: the queued rows are dropped, not asked; only the requests in flight finish
        workers.shutdown(wait=False, cancel_futures=True)
    mine = [row for row in rows if row.get("judged_by") == label and row.get("machine_judgement")]
    yes = sum(1 for row in mine if row["machine_judgement"] == YES)
    return JudgingSummary(label, len(rows), len(rows) - len(pending), len(mine), yes, tally, time.monotonic() - started)


def gathered(
    judge: Judge, answers: dict[int, MachineJudgement | Future | None], batch: range, tally: Tally
) -> tuple[dict[int, MachineJudgement | None], str | None, int]:
    """The answers of the batch's requests, in order; why the judge failed, when it did (the answers got
    before it are returned, the rest of the batch is left unasked); and the rows handled, counted from the
    first of the pass."""
    fresh: dict[int, MachineJudgement | None] = {}
    for index in batch:
        if isinstance(answers[index], Future):
            try:
                fresh[index] = collected(judge, answers[index], tally)
            except JudgeFailed as failure:
                return fresh, f"judge {judge.name} failed: {scrub(str(failure))}", index + 1
    return fresh, None, batch.stop


def finished(answers: dict[int, MachineJudgement | Future | None], indices: range, tally: Tally) -> dict[int, MachineJudgement]:
    """The answers of the requests among `indices` that had come back when a pass stopped (a failure
    among them is not an answer, and is left uncounted)."""
    late = {}
    for index in indices:
        future = answers[index]
        if isinstance(future, Future) and future.done() and not future.cancelled() and future.exception() is None:
            answer = future.result()
            if isinstance(answer, MachineJudgement):
                tally.count(answer)
                late[index] = answer
    return late


def _cached(cache: JudgementCache, pairs: Sequence[tuple[str, str]], new: dict[int, MachineJudgement]) -> str | None:
    """None once the new answers are in the cache, else why they are not."""
    try:
        cache.put_all((*pairs[index], answer) for index, answer in new.items())
    except CacheNotWritten as error:
        return str(error)
    return None


class _Saving:
    """A pass's answers going to the cache and the file, batch by batch, and what each holds: so a pass
    that stops says exactly which answers it kept where."""

    def __init__(self, rows, pending, pairs, answers, label, path: Path, cache: JudgementCache, tally: Tally):
        self.rows, self.pending, self.pairs, self.answers, self.label = rows, pending, pairs, answers, label
        self.path, self.cache, self.tally = path, cache, tally
        self.filled: set[int] = set()  # rows of `pending` whose columns hold this judge's answer
        self.in_file: set[int] = set()
        self.in_cache_only: set[int] = set()  # new answers the cache holds and the file does not
        self.lost: set[int] = set()  # new answers neither could keep
        self.cache_problem: str | None = None
        self.file_problem: str | None = None

    @property
    def problems(self) -> list[str]:
        return [problem for problem in (self.cache_problem, self.file_problem) if problem]

    def save(self, indices: range, fresh: dict[int, MachineJudgement | None], write: bool) -> None:
        """`fresh` (the new answers of `indices`) to the cache, then every answer of `indices` into its row,
        and the file written (when `write`, or the cache failed): each tried whatever the other did."""
        self.answers.update(fresh)
        for index in indices:
            if isinstance(self.answers[index], MachineJudgement):
                self.pending[index].update(machine_columns(self.answers[index], self.label))
                self.filled.add(index)
        new = {index: answer for index, answer in fresh.items() if answer is not None}
        cached = _cached(self.cache, self.pairs, new)
        self.cache_problem = self.cache_problem or cached
        if cached:
            self.lost.update(new)
        else:
            self.in_cache_only.update(new)
        if write or cached:
            self.write()

    def write(self) -> None:
        """Every filled row into the file: what the cache alone held (or nothing could) is then in it too."""
        try:
            write_judging_file(self.rows, self.path)
        except InvalidInputError as error:  # a full disk: "cannot write (No space left on device)"
            self.file_problem = self.file_problem or f"{self.path}: {error.problem}"
            return
        self.in_file = set(self.filled)
        self.in_cache_only -= self.in_file
        self.lost -= self.in_file
        self.tally.saved = len(self.in_file)

    def stopped(self, name: str, failure: str | None, reached: int) -> str:
        """One line: why the pass stopped, where its answers are, what is left and what to do."""
        causes = "; ".join(cause for cause in (failure, *self.problems) if cause)
        kept = f"{counted(len(self.in_file), 'row')} carry {name}'s answer in {self.path}"
        if self.in_cache_only:
            only = counted(len(self.in_cache_only), "more answer")
            kept += f", {only} only in the judgement cache (the next pass takes them from there, unasked)"
        if self.lost:
            kept += f"; {counted(len(self.lost), 'answer')} could not be saved anywhere (asked again next time)"
        left = len(self.pending) - len(self.in_file) - len(self.in_cache_only)
        cures = [cure for cure, needed in (("fix the judge", failure), ("free some space", self.problems)) if needed]
        return (
            f"{causes}: the pass stopped after {reached} of {counted(len(self.pending), 'row')} to judge; {kept}; "
            f"{left} still to ask; {' and '.join(cures)}, then run the same command again to resume"
        )


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
    fresh, failure, _ = gathered(judge, answers, range(len(pairs)), tally)
    new = {index: answer for index, answer in fresh.items() if answer is not None}
    problem = _cached(cache, pairs, new)
    if failure or problem:
        kept = "not kept: " if problem else "kept "
        raise ServiceFailedError(
            f"{'; '.join(p for p in (failure, problem) if p)}: stopped; the {counted(len(new), 'answer')} got before are "
            f"{kept}in the judgement cache; {'fix the judge' if failure else 'free some space'}, then run it again"
        )
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


def collected(judge: Judge, future: Future, tally: Tally, role: str = "judge", unit: str = "rows") -> MachineJudgement | None:
    """The request's answer, counted; None for a failure, counted by cause (and the pass stopped when the
    service is down from the start). A question generator is asked the same way: `role` and `unit` name
    it and what it is asked in the stopping line (`generator NAME: the first 10 requests asked ...`)."""
    try:
        answer = future.result()
    except SystemExit as stop:  # a judge's own code asking to end the process: the judge failed, not the command
        raise JudgeFailed(f"its code called sys.exit({stop.code!r})") from None
    except RetrieverFault as fault:
        tally.errors[scrub(str(fault)).split(ANSWER_MARK, 1)[0]] += 1
        tally.failed += 1
        if isinstance(fault, ServiceUnreachable):
            tally.unreachable += 1
            _fail_fast(judge, tally, fault, role, unit)
        return None
    tally.count(answer)
    return answer


def _fail_fast(judge: Judge, tally: Tally, fault: RetrieverFault, role: str, unit: str) -> None:
    """No answer yet and `fail_fast_after` rows in a row that could not reach the service: it is down."""
    if judge.fail_fast_after and not tally.asked and tally.unreachable >= judge.fail_fast_after:
        raise ServiceFailedError(
            f"{role} {judge.name}: the first {tally.unreachable} {unit} asked could not reach its service, stopped: {scrub(str(fault))}"
        )


def judge_agreement(path: Path, label: str) -> Agreement | None:
    """Cohen's kappa of one judge (`judged_by` label) with people, over the file's rows carrying both a
    person's and that judge's answer; None when no row does."""
    pairs = [
        (row.human, row.machine)
        for row in answered_rows(numbered_judging_rows(path))
        if row.judged_by == label and row.human is not None and row.machine is not None
    ]
    return kappa_agreement(pairs) if pairs else None
