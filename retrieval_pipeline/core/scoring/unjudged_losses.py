"""Lost hits the labels may explain: a question that lost its hit while its new top k holds a document
nobody judged.

After an embedding swap the new retriever surfaces documents the labellers never saw, and each one is
scored as a miss. A lost hit with an unjudged document in its place may be a better answer nobody has
labelled yet, so a verdict counts them ("7 of the 12 lost hits ...") and, past
`tolerances.max_unjudged_share`, calls the drop inconclusive instead of a regression.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.slice_tests import TESTED_CUTOFFS
from retrieval_pipeline.core.scoring.tolerances import exceeds


@dataclass(frozen=True)
class UnjudgedLosses:
    lost: int
    """How many questions lost a hit."""
    unjudged: tuple[str, ...]
    """The lost hits whose new top k (k: the deepest cut-off they lost the hit at) holds an unjudged document."""
    depths: tuple[int, ...] = ()
    """The cut-offs those top k were read at, in increasing order."""

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
        top = " or ".join(str(k) for k in self.depths)
        return (
            f"{len(self.unjudged)} of the {self.lost} lost hits have unjudged documents in their new top {top}: "
            "judge them before trusting this."
        )


def unjudged_losses(current: RunResult, baseline: RunResult, lost: Sequence[str]) -> UnjudgedLosses:
    """`lost` are the questions that lost a hit (both runs hold the same unchanged questions, labels
    included, so the current run's labels are the baseline's)."""
    now, then = current.questions, baseline.questions
    unjudged = {k: now.unjudged_ids(k) for k in TESTED_CUTOFFS}  # where hits are lost, as flipped_questions counts them
    found, depths = [], set()
    for question_id in lost:
        position, earlier = now.positions[question_id], then.positions[question_id]
        depth = max(k for k in TESTED_CUTOFFS if then.hits(k)[earlier] and not now.hits(k)[position])
        if unjudged[depth][position]:
            found.append(question_id)
            depths.add(depth)
    return UnjudgedLosses(len(lost), tuple(found), tuple(sorted(depths)))
