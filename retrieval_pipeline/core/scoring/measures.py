"""Every measure a run is judged by, declared once: its name, how it reads, and who shows or gates it.

Tables, JSON, Markdown, HTML, charts, Dagster metadata, gates and the leaderboard all read these
declarations instead of deciding by name which figures to show, so a new measure is one declaration and
one computation (ranking_metrics.py). As in ir_measures, the declarations are kept apart from the code
that computes them. Readers ask the functions below, which read `MEASURES` when called.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from retrieval_pipeline.core.base.formatting import percent, signed_pp
from retrieval_pipeline.core.base.registry import Registry
from retrieval_pipeline.core.scoring.ranking_metrics import judged, judged_any, ndcg, recall, reciprocal_rank

if TYPE_CHECKING:
    import numpy as np

    from retrieval_pipeline.core.scoring.ranking_metrics import Ranked

EVERY_CUTOFF = "every cut-off"
"""One figure per cut-off k of the run (the hit rate at 1, 3, 5, 10, ...)."""
DEEPEST_CUTOFF = "deepest cut-off"
"""One figure at the run's deepest cut-off D: a rank-aware score needs the whole ranking the run kept."""
RATE, SCORE = "rate", "score"
"""How a figure reads: a share of questions as a percentage with changes in points, or a mean score
with three decimals."""
SOURCE = "built in"


@dataclass(frozen=True)
class Measure:
    name: str
    label: str
    depth: str = DEEPEST_CUTOFF
    scale: str = SCORE
    headline: bool | str = True
    """Shown beside the hit rates in every table, report and leaderboard (the rest stay in JSON and the
    stored summary: Recall beside the top-k hit rates would mostly repeat them). DEEPEST_CUTOFF: shown
    there at the run's deepest cut-off only, every cut-off staying in JSON, metadata and the summary."""
    charted: bool = False
    gate: str | tuple[tuple[int, str], ...] | None = None
    """The tolerance option that gates the figure at the deepest cut-off, or (cut-off, option) pairs."""
    score: Callable[[Ranked, int], np.ndarray] | None = None
    """Each question's score at depth k; None for the hit rate, which is counted from first-hit ranks."""
    scores_silence: bool = True
    """A question with no expected ids scores 1 on an empty ranking and 0 otherwise, the hit's rule; False
    for a measure of the ranking itself (judged@k), which scores every question by `score`."""
    paired_test: bool = True
    """Whether a change of it between two runs gets a paired test (Holm-corrected with the hit rates'):
    False for a measure of the labels' coverage (judged@k), which says nothing about the retriever and
    would only widen the family the quality measures are corrected over."""
    machine_labels_only: bool = False
    """Listed in the terminal's `Ranking:` line only where a machine judge labelled some of the run's
    documents: until then judged by either (judged_any@k) is judged@k over again. JSON, metadata and the
    summary always hold it."""
    key_pattern: str = "{name}@{k}"
    """How stores, JSON and metadata name the figure."""
    title_pattern: str = "{label}@{k}"
    """How a sentence or a row label names it (`MRR@10`)."""
    short_pattern: str = "{name}@{k}"
    """How a column or a chart line is headed (`mrr@10`, `top-1`)."""
    column_pattern: str = "{name}@{k}"
    """How a dataframe column holding the figure is named (`mrr@10`, `top1_hit_rate`)."""

    def __post_init__(self) -> None:
        if (
            self.depth not in (EVERY_CUTOFF, DEEPEST_CUTOFF)
            or self.scale not in (RATE, SCORE)
            or self.headline not in (True, False, DEEPEST_CUTOFF)
        ):
            raise ValueError(
                f"measure '{self.name}': depth {self.depth!r}, scale {self.scale!r} or headline {self.headline!r} "
                "is not one of the declared ones"
            )

    def headline_at(self, k: int, cutoffs: Sequence[int]) -> bool:
        """Whether tables show this measure at cut-off `k` of a run of these cut-offs."""
        return k == cutoffs[-1] if self.headline == DEEPEST_CUTOFF else bool(self.headline)

    def cutoffs(self, cutoffs: Sequence[int]) -> tuple[int, ...]:
        return tuple(cutoffs) if self.depth == EVERY_CUTOFF else (cutoffs[-1],)

    def key(self, k: int) -> str:
        return self.key_pattern.format(name=self.name, k=k)

    def title(self, k: int) -> str:
        return self.title_pattern.format(label=self.label, k=k)

    def short(self, k: int) -> str:
        return self.short_pattern.format(name=self.name, k=k)

    def column(self, k: int) -> str:
        return self.column_pattern.format(name=self.name, k=k)

    def cutoff_of(self, key: str) -> int | None:
        """The cut-off `key` names this measure at (`mrr@12` -> 12), or None when it names another."""
        before, _, after = self.key("\0").partition("\0")
        middle = key[len(before) : len(key) - len(after)]
        return int(middle) if key.startswith(before) and key.endswith(after) and middle.isdigit() else None

    def text(self, value: float) -> str:
        return percent(value) if self.scale == RATE else f"{value:.3f}"

    def change_text(self, delta: float) -> str:
        return signed_pp(delta) if self.scale == RATE else f"{round(delta, 3) + 0.0:+.3f}"

    def gate_option(self, k: int, cutoffs: Sequence[int]) -> str | None:
        if isinstance(self.gate, tuple):
            return dict(self.gate).get(k)
        return self.gate if k == cutoffs[-1] else None


@dataclass(frozen=True)
class Figure:
    """One measure at one cut-off: what a row, a column, a metadata key or a chart line is about."""

    measure: Measure
    k: int

    @property
    def key(self) -> str:
        return self.measure.key(self.k)

    @property
    def title(self) -> str:
        return self.measure.title(self.k)

    @property
    def short(self) -> str:
        return self.measure.short(self.k)

    @property
    def column(self) -> str:
        return self.measure.column(self.k)

    def text(self, value: float) -> str:
        return self.measure.text(value)

    def change_text(self, delta: float) -> str:
        return self.measure.change_text(delta)


def measure_registry(declared: Iterable[Measure]) -> Registry[Measure]:
    registry: Registry[Measure] = Registry("measure")
    for measure in declared:
        registry.add(measure.name, measure, SOURCE)
    return registry


HIT_RATE = Measure(
    "hit_rate",
    "top-k hit rate",
    EVERY_CUTOFF,
    RATE,
    charted=True,
    gate=((1, "max_top1_drop"), (3, "max_top3_drop")),
    key_pattern="top{k}",
    title_pattern="top-{k}",
    short_pattern="top-{k}",
    column_pattern="top{k}_hit_rate",
)
"""The methodology's own figure: counted from each question's first-hit rank, kept exact as counts."""
TESTED = tuple(Figure(HIT_RATE, k) for k, _ in HIT_RATE.gate)
"""The methodology's two rates, top-1 and top-3 (the cut-offs the hit rate's gate names): the headline
figures with exact gates and paired tests on every slice, the ones a history row and a breakdown show."""

MEASURES: Registry[Measure] = measure_registry(
    (
        HIT_RATE,
        Measure("mrr", "MRR", charted=True, gate="max_mrr_drop", score=reciprocal_rank),
        Measure("ndcg", "nDCG", charted=True, gate="max_ndcg_drop", score=ndcg),
        Measure("recall", "Recall", EVERY_CUTOFF, headline=False, gate="max_recall_drop", score=recall),
        Measure(
            "judged", "Judged", EVERY_CUTOFF, RATE, headline=DEEPEST_CUTOFF, score=judged, scores_silence=False, paired_test=False
        ),
        # judged by a person or a machine judge (docs/labels.md): kept beside judged@k, never in its place
        Measure(
            "judged_any",
            "Judged (any)",
            EVERY_CUTOFF,
            RATE,
            headline=False,
            score=judged_any,
            scores_silence=False,
            paired_test=False,
            machine_labels_only=True,
        ),
    )
)


def figures(cutoffs: Sequence[int], *, headline: bool | None = None, charted: bool | None = None) -> list[Figure]:
    """Every declared measure at the cut-offs it is taken at, in declaration order (hit rates first)."""
    return [
        Figure(measure, k)
        for measure in MEASURES.values()
        if charted is None or measure.charted == charted
        for k in measure.cutoffs(cutoffs)
        if headline is None or measure.headline_at(k, cutoffs) == headline
    ]


def ranking_figures(cutoffs: Sequence[int], **selection: bool) -> list[Figure]:
    """The measures scored per question (all but the hit rate), as `figures` selects them."""
    return [figure for figure in figures(cutoffs, **selection) if figure.measure.score is not None]


def gated_figures(cutoffs: Sequence[int]) -> list[tuple[Figure, str]]:
    """(figure, tolerance option) for every figure some tolerance option gates."""
    found = []
    for measure in MEASURES.values():
        for k in measure.cutoffs(cutoffs):
            option = measure.gate_option(k, cutoffs)
            if option is not None:
                found.append((Figure(measure, k), option))
    return found


def figure_of(key: str) -> Figure | None:
    """The declared figure a stored key names (`top5`, `ndcg@12`); None for a key no measure declares
    (a measure since removed, or another tool's column)."""
    for measure in MEASURES.values():
        k = measure.cutoff_of(key)
        if k is not None:
            return Figure(measure, k)
    return None


def figure_names(cutoffs: Sequence[int]) -> dict[str, Figure]:
    """Every declared figure at `cutoffs` by the names a person may write for it in a configuration: its
    stored key (`top1`, `ndcg@10`) and measure@k (`hit_rate@1`)."""
    named = {}
    for figure in figures(cutoffs):
        named[figure.key] = named[f"{figure.measure.name}@{figure.k}"] = figure
    return named


def in_declared_order(found: Iterable[Figure]) -> list[Figure]:
    """Measures in declaration order; each measure's cut-offs in increasing order, and figures of one
    measure at the deepest cut-off (taken from runs of several depths) in the order given."""
    order = list(MEASURES)
    return sorted(found, key=lambda f: (order.index(f.measure.name), f.k if f.measure.depth == EVERY_CUTOFF else 0))
