"""Lost hits the labels may explain: a question that lost its hit while its new top k holds a document
nobody judged.

After an embedding swap the new retriever surfaces documents the labellers never saw, and each one is
scored as a miss. A lost hit with an unjudged document in its place may be a better answer nobody has
labelled yet. Every report counts them; a verdict speaks of them only where they could change it: a
regression that counting those documents as relevant would bring within every tolerance (`could_clear`,
decided by regression.py, which knows the gates), or, past `tolerances.max_unjudged_share`, a drop
called inconclusive instead of a regression. On a pass, or on a regression they cannot explain, they are
a count in the details, never a warning on the verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from retrieval_pipeline.core.scoring.checks.tolerances import exceeds
from retrieval_pipeline.core.scoring.question_columns import QuestionColumns
from retrieval_pipeline.core.scoring.question_fields import FIELDS
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.stats.slice_tests import TESTED_CUTOFFS


@dataclass(frozen=True)
class UnjudgedLosses:
    lost: int
    """How many questions lost a hit."""
    unjudged: tuple[str, ...]
    """The lost hits whose new top k (k: the deepest cut-off they lost the hit at) holds an unjudged document."""
    depths: tuple[int, ...] = ()
    """The cut-offs those top k were read at, in increasing order."""
    documents: tuple[tuple[str, ...], ...] = ()
    """The unjudged documents in each of those top k, in `unjudged`'s order: the ones that took the hits' places."""
    could_clear: bool = False
    """Counting `documents` as relevant would bring every drop of a regression within its tolerance: the
    verdict could be the labels' doing (set by the check; False on anything but a regression)."""

    @property
    def share(self) -> Fraction:
        return Fraction(len(self.unjudged), self.lost) if self.lost else Fraction(0)

    def explain(self, max_share: float | None) -> bool:
        """More of the lost hits than `max_share` have unjudged documents in their place (strictly more)."""
        return max_share is not None and bool(self.unjudged) and exceeds(self.share, max_share)

    def sentence(self) -> str | None:
        """ "7 of the 12 lost hits have unjudged documents in their new top 3: judge them before trusting this."""
        if not self.unjudged:
            return None
        return f"{self.count_phrase}: judge them before trusting this."

    def clearing_sentence(self) -> str | None:
        """What a regression's verdict ends with when the unjudged documents could clear it; None otherwise."""
        if not self.could_clear or not self.unjudged:
            return None
        return (
            f"{self.count_phrase}; counted as relevant they would bring every drop within its tolerance: "
            "judge them before trusting this."
        )

    @property
    def count_phrase(self) -> str:
        top = " or ".join(str(k) for k in self.depths)
        return f"{len(self.unjudged)} of the {self.lost} lost hits have unjudged documents in their new top {top}"

    @property
    def detail(self) -> str | None:
        """ "7 with unjudged documents in their place": the short count the details give beside the lost
        hits; None when none has any."""
        return f"{len(self.unjudged)} with unjudged documents in their place" if self.unjudged else None


def unjudged_losses(current: RunResult, baseline: RunResult, lost: Sequence[str]) -> UnjudgedLosses:
    """`lost` are the questions that lost a hit (both runs hold the same unchanged questions, labels
    included, so the current run's labels are the baseline's)."""
    now, then = current.questions, baseline.questions
    unjudged = {k: now.unjudged_ids(k) for k in TESTED_CUTOFFS}  # where hits are lost, as flipped_questions counts them
    found, documents, depths = [], [], set()
    for question_id in lost:
        position, earlier = now.positions[question_id], then.positions[question_id]
        depth = max(k for k in TESTED_CUTOFFS if then.hits(k)[earlier] and not now.hits(k)[position])
        if unjudged[depth][position]:
            found.append(question_id)
            documents.append(tuple(unjudged[depth][position]))
            depths.add(depth)
    return UnjudgedLosses(len(lost), tuple(found), tuple(sorted(depths)), tuple(documents))


def counted_relevant(run: RunResult, losses: UnjudgedLosses) -> RunResult:
    """`run` with the unjudged documents that took the lost hits' places counted as relevant (added to
    their questions' expected ids): what the verdict would be if every one of them answered. Nothing is
    stored; the fingerprints stay, so the pair still lines up question by question."""
    added = dict(zip(losses.unjudged, losses.documents))
    if not added:
        return run
    questions = run.questions
    expected = [
        tuple(dict.fromkeys((*ids, *added.get(question_id, ()))))
        for question_id, ids in zip(questions.ids, questions.values("expected_document_ids"))
    ]
    columns = {name: expected if name == "expected_document_ids" else questions.column(name) for name in FIELDS}
    return replace(run, questions=QuestionColumns.of(**columns))
