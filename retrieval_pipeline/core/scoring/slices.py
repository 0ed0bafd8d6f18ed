"""The slices a run's figures are broken down by, declared once: form, hard class and turn depth.

A drop in one form, class or turn depth can hide behind a flat overall rate, so every slice is counted,
checked, tested, compared, stored and shown. Each of those readers iterates `SLICES`: a slice declared
here is a breakdown in every output, and nothing names its slices one by one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from retrieval_pipeline.core.base.arrow_arrays import numbers, present
from retrieval_pipeline.core.golden.conversations import DEPTHS

if TYPE_CHECKING:
    import numpy as np

    from retrieval_pipeline.core.scoring.question_columns import QuestionColumns

Grouping = Callable[["QuestionColumns"], tuple[list[str], "np.ndarray"]]
"""A run's questions to the slice's keys (in the order shown) and each question's key number (-1: none)."""


@dataclass(frozen=True)
class Slice:
    name: str
    """What the breakdown is stored and shown under (`by_<name>`), and the paired tests' slice name."""
    grouping: Grouping
    listed_when_empty: bool = True
    """False: a run none of whose questions has a key lists no such breakdown at all (a set without
    conversations has no turn depths, and its documents stay as they were before depths existed)."""

    @property
    def label(self) -> str:
        return self.name.replace("_", " ")

    @property
    def title(self) -> str:
        return f"By {self.label}"

    def groups(self, questions: QuestionColumns) -> tuple[list[str], np.ndarray]:
        return self.grouping(questions)


def _label(name: str) -> Grouping:
    """A question label's keys in first-seen order."""
    return lambda questions: questions.groups(name)


def turn_depths(questions: QuestionColumns) -> tuple[list[str], np.ndarray]:
    """The depths (conversations.DEPTHS) that occur, in depth order, not first-seen: a table reads 1, 2, 3,
    4+ whichever conversation came first. A single question (no turn) has no depth."""
    import numpy as np

    turns = questions.column("turn")
    number = np.where(present(turns), numbers(turns), 0).astype(np.int64)
    depth = np.where(number > 0, np.minimum(number, len(DEPTHS)) - 1, -1)
    occurring = np.unique(depth[depth >= 0])
    renumbered = np.full(len(DEPTHS) + 1, -1, np.int64)  # the last slot maps -1 to -1
    renumbered[occurring] = np.arange(len(occurring))
    return [DEPTHS[index] for index in occurring.tolist()], renumbered[depth]


FORM = Slice("form", _label("form"))
HARD_CLASS = Slice("hard_class", _label("hard_class"))
TURN_DEPTH = Slice("turn_depth", turn_depths, listed_when_empty=False)
SLICES = (FORM, HARD_CLASS, TURN_DEPTH)
"""In the order every output lists them."""


def slice_named(name: str) -> Slice:
    return next(declared for declared in SLICES if declared.name == name)
