"""A run's breakdowns, one per declared slice (form, hard class, turn depth: slices.py): each group's rates
and ranking figures, beside the check's change for the group where the check compared it."""

from __future__ import annotations

from dataclasses import dataclass

from retrieval_pipeline.core.scoring.checks.change_breakdown import GroupDelta
from retrieval_pipeline.core.scoring.measures import TESTED, Figure
from retrieval_pipeline.core.scoring.results import GroupRates
from retrieval_pipeline.core.scoring.slices import Slice
from retrieval_pipeline.core.services.views.figure_rows import FigureDelta, FigureRow


@dataclass(frozen=True)
class GroupRow:
    """One form, hard class or turn depth: its top-1 and top-3 rates (all a breakdown counts) and every ranking figure."""

    key: str
    questions: int
    rates: tuple[FigureRow, ...]
    scores: tuple[FigureRow, ...]
    cutoffs: tuple[int, ...]
    """The run's cut-offs, which decide which scores are headline ones (see `Measure.headline_at`)."""

    @property
    def headline_scores(self) -> tuple[FigureRow, ...]:
        return tuple(row for row in self.scores if row.figure.measure.headline_at(row.figure.k, self.cutoffs))


@dataclass(frozen=True)
class GroupChange:
    """A group as the check compared it: its questions there (unchanged ones only) and its rate changes."""

    key: str
    questions: int
    deltas: tuple[FigureDelta, ...]


@dataclass(frozen=True)
class Breakdown:
    name: str
    """The declared slice it groups by: `form`, `hard_class` or `turn_depth`."""
    title: str
    figures: tuple[Figure, ...]
    """The rates every row holds, in order."""
    rows: tuple[GroupRow, ...]
    changes: tuple[GroupChange, ...] = ()
    listed: bool = True
    """Whether a document lists it: always, or only with rows for a slice not `listed_when_empty`."""

    @property
    def label(self) -> str:
        return self.name.replace("_", " ")


def breakdown(
    declared: Slice,
    groups: dict[str, GroupRates],
    metrics: dict[str, dict[str, float]],
    ranking: list[Figure],
    deltas: tuple[GroupDelta, ...],
    judged: bool,
    cutoffs: tuple[int, ...],
) -> Breakdown:
    """Each group beside the check's change for it where the check compared it (the terminal shows those
    whenever they exist, the reports only for a judged run), then the check's groups on their own."""
    rated = TESTED
    by_key = {delta.key: dict(delta.deltas) for delta in deltas}
    rows = []
    for key, rates in groups.items():
        intervals, changes = rates.intervals(), by_key.get(key, {})
        cells = tuple(
            FigureRow(
                figure,
                rates.hit_rate(figure.k),
                rates.questions,
                rates.hit_count(figure.k),
                intervals[figure.key],
                change=changes.get(figure.k) if judged else None,
                checked=changes.get(figure.k),
            )
            for figure in rated
        )
        scores = tuple(FigureRow(figure, metrics[key][figure.key], rates.questions) for figure in ranking)
        rows.append(GroupRow(key, rates.questions, cells, scores, cutoffs))
    changes = tuple(
        GroupChange(delta.key, delta.questions, tuple(FigureDelta(figure, delta.delta(figure.k)) for figure in rated))
        for delta in deltas
    )
    listed = bool(rows) or declared.listed_when_empty
    return Breakdown(declared.name, declared.title, rated, tuple(rows), changes, listed)
