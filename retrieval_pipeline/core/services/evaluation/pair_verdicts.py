"""The latest verdict of every configured (set, retriever) pair, read from the result store.

The question "did anything regress last night?" has one answer across all pairs; each pair's check
answers it for one partition only, so a person would have to open every partition to find the failed
one. Read from the stored summaries (the verdict and the sentence each check saved with its run), never
recomputed, so this answer and the per-pair checks cannot disagree. Pure: no Dagster, no printing.

It fails closed: a pair whose latest run cannot be read fails, since an older run's verdict would answer
for a night it did not see; and no pair evaluated at all is told apart (`evaluated`), so a mistyped store
is not read as a quiet night.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval_pipeline.core.scoring.checks.verdicts import FAILING, WARNED, Verdict
from retrieval_pipeline.core.scoring.results import GRADER
from retrieval_pipeline.core.storage.run_summary import RunSummary
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

NOT_EVALUATED = "not_evaluated"
UNCHECKED = "unchecked"
UNREADABLE = "unreadable"
"""Statuses beside the stored verdicts: a pair with no stored run, a run saved without a check (an
imported run file), and a latest run whose summary cannot be read."""
_FAILING = frozenset({*(verdict.value for verdict in FAILING), UNREADABLE})
_WARNED = frozenset({*(verdict.value for verdict in WARNED), NOT_EVALUATED})
_KNOWN = frozenset({*(verdict.value for verdict in Verdict), NOT_EVALUATED, UNCHECKED, UNREADABLE})


@dataclass(frozen=True)
class PairVerdict:
    set_identifier: str
    retriever_identifier: str
    status: str
    """The latest run's stored verdict (`pass`, `regression`, `incomplete`, ...), or a status above."""
    sentence: str
    run_id: str | None = None

    @property
    def pair(self) -> str:
        return f"{self.set_identifier} × {self.retriever_identifier}"

    @property
    def failed(self) -> bool:
        """A verdict this version does not know (written by a later one) fails: safe when in doubt."""
        return self.status in _FAILING or self.status not in _KNOWN

    @property
    def warned(self) -> bool:
        return self.status in _WARNED


@dataclass(frozen=True)
class PairVerdicts:
    verdicts: tuple[PairVerdict, ...]

    @property
    def failed(self) -> list[PairVerdict]:
        return [verdict for verdict in self.verdicts if verdict.failed]

    @property
    def warned(self) -> list[PairVerdict]:
        return [verdict for verdict in self.verdicts if verdict.warned]

    @property
    def passed(self) -> bool:
        return not self.failed

    @property
    def evaluated(self) -> int:
        """The pairs with a stored run: none means the store holds nothing for this configuration."""
        return sum(verdict.status != NOT_EVALUATED for verdict in self.verdicts)

    @property
    def sentence(self) -> str:
        """What a person reads first: how many pairs failed, then each failed pair with its check's sentence."""
        total = len(self.verdicts)
        if not self.failed:
            flagged = ", ".join(f"{v.pair} ({v.sentence})" for v in self.warned)
            return f"No pair failed its latest check ({total} pairs)" + (f"; flagged: {flagged}." if flagged else ".")
        listed = " ".join(f"{v.pair} ({v.status}): {v.sentence}" for v in self.failed)
        return f"{len(self.failed)} of {total} pairs failed their latest check. {listed}"


def latest_verdicts(
    store: ResultStore, set_identifiers: Sequence[str], retriever_identifiers: Sequence[str], grader: str = GRADER
) -> PairVerdicts:
    """Every pair of the given sets and retrievers, in that order, as its latest run left it."""
    store.check_readable()
    verdicts = []
    for set_identifier in set_identifiers:
        for retriever_identifier in retriever_identifiers:
            key = HistoryKey(set_identifier, retriever_identifier, grader)
            history = store.history(key)
            if not history:
                verdicts.append(PairVerdict(set_identifier, retriever_identifier, NOT_EVALUATED, "not evaluated yet"))
                continue
            latest = next(store.summaries(history[:1]), None)  # an unreadable one is reported as skipped
            verdicts.append(_verdict(key, history[0].run_id, None if latest is None else RunSummary.of(key, latest[1])))
    return PairVerdicts(tuple(verdicts))


def _verdict(key: HistoryKey, run_id: str, summary: RunSummary | None) -> PairVerdict:
    pair = (key.set_identifier, key.retriever_identifier)
    if summary is None:
        sentence = f"its latest run {run_id} cannot be read, and an older run's verdict does not answer for it"
        return PairVerdict(*pair, UNREADABLE, sentence, run_id)
    if not summary.complete:
        status = Verdict.INCOMPLETE.value
    else:
        status = summary.verdict or UNCHECKED
    sentence = summary.verdict_summary or _unstated(summary, status)
    return PairVerdict(*pair, status, sentence, summary.run_id)


def _unstated(summary: RunSummary, status: str) -> str:
    """For a run stored before checks saved their sentence, or saved without a check."""
    if status == UNCHECKED:
        return "saved without a regression check"
    if status == Verdict.INCOMPLETE.value:
        return f"{summary.errored_count} of {summary.question_count} questions failed"
    against = f" against {summary.baseline_run_id}" if summary.baseline_run_id else ""
    return f"{status.replace('_', ' ')}{against}"
