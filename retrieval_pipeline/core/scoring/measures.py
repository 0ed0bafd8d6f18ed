"""Every measure a run is judged by, declared once: a name, its cut-offs, and how it is shown.

Tables, JSON, Markdown, HTML, charts, Dagster metadata, gates and the leaderboard all read these
declarations instead of deciding by name which figures to show, so a new measure is one declaration and
one score function (ranking_metrics.py). As in ir_measures, a measure is a name with its parameters, its
figure at a cut-off (`mrr@10`) is derived from it, and the code that computes it is kept apart. Readers
ask the functions below, which read `MEASURES` when called.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

from retrieval_pipeline.core.base.formatting import percent, signed_pp
from retrieval_pipeline.core.base.registry import Registry
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.ranking_metrics import Ranked, judged, judged_any, ndcg, recall, reciprocal_rank

if TYPE_CHECKING:
    import numpy as np

    from retrieval_pipeline.core.scoring.scoring import Relevance

EVERY_CUTOFF = "every cut-off"
"""One figure per cut-off k of the run (the hit rate at 1, 3, 5, 10, ...)."""
DEEPEST_CUTOFF = "deepest cut-off"
"""One figure at the run's deepest cut-off D: a rank-aware score needs the whole ranking the run kept."""
RATE, SCORE = "rate", "score"
"""How a figure reads: a share of questions as a percentage with changes in points, or a mean score
with three decimals."""
IN_TABLES = "in tables"
"""Shown beside the hit rates in every table, report and leaderboard, at each cut-off it is taken at."""
IN_TABLES_AT_DEEPEST = "in tables at the deepest cut-off"
"""Shown there at the run's deepest cut-off only; every cut-off stays in JSON, metadata and the summary."""
LISTED = "listed"
"""Kept out of the tables (Recall beside the top-k hit rates would mostly repeat them) and listed in the
terminal's `Ranking:` line; JSON, metadata and the stored summary hold every figure whatever is shown."""
LISTED_WITH_MACHINE_LABELS = "listed with machine labels"
"""As LISTED, once a machine judge labelled some of the run's documents: until then it repeats another
measure (judged_any@k is judged@k over again)."""
SOURCE = "built in"

Score = Callable[[Ranked, int], "np.ndarray"]
"""Each question's score at cut-off k, over every question at once (ranking_metrics.py)."""


@dataclass(frozen=True)
class Naming:
    """How a measure's figure at cut-off k is written: patterns over {name}, {label} and {k}."""

    key: str
    """In stores, JSON and metadata (`mrr@10`, `top1`)."""
    title: str
    """In a sentence or a row label (`MRR@10`, `top-1`)."""
    short: str
    """Heading a column or a chart line (`mrr@10`, `top-1`)."""
    column: str
    """Naming a dataframe column (`mrr@10`, `top1_hit_rate`)."""


AT_CUTOFF = Naming("{name}@{k}", "{label}@{k}", "{name}@{k}", "{name}@{k}")
"""As ir_measures writes a measure at a cut-off (`mrr@10`, `MRR@10`): every measure's but the hit rate's."""
TOP_K = Naming("top{k}", "top-{k}", "top-{k}", "top{k}_hit_rate")
"""The hit rate's own naming: `top1` stored, `top-1` shown, `top1_hit_rate` in a dataframe."""


@dataclass(frozen=True)
class Measure:
    """A measure: its name and label, the cut-offs it is taken at, how it reads and where it is shown.
    Whether it gets the silence rule and a paired test is derived (`of_labels`)."""

    name: str
    """How stores, JSON and metadata name it: `mrr` is `mrr@10` at cut-off 10."""
    label: str
    """How a sentence or a row label names it: `MRR` is `MRR@10`."""
    _: KW_ONLY
    score: Score | None = None
    """Each question's score at cut-off k; None for the hit rate, which is counted from first-hit ranks."""
    depth: str = DEEPEST_CUTOFF
    """The cut-offs it is taken at: EVERY_CUTOFF or DEEPEST_CUTOFF."""
    scale: str = SCORE
    """How it reads: RATE or SCORE."""
    shown: str = IN_TABLES
    """Where it is shown: IN_TABLES, IN_TABLES_AT_DEEPEST, LISTED or LISTED_WITH_MACHINE_LABELS."""
    charted: bool = False
    """A line of the history chart."""
    gate: str | tuple[tuple[int, str], ...] | None = None
    """The field of `Tolerances` that gates the figure at the deepest cut-off, or (cut-off, field) pairs:
    checked against the model when declared, read only by `gates`."""
    of_labels: bool = False
    """A measure of the labels' coverage, not of the retriever (judged@k): see `scores_silence`, `paired_test`."""
    naming: Naming = AT_CUTOFF
    """How its figures are written (the hit rate's is TOP_K)."""

    def __post_init__(self) -> None:
        if (
            self.depth not in (EVERY_CUTOFF, DEEPEST_CUTOFF)
            or self.scale not in (RATE, SCORE)
            or self.shown not in (IN_TABLES, IN_TABLES_AT_DEEPEST, LISTED, LISTED_WITH_MACHINE_LABELS)
        ):
            raise ValueError(
                f"measure '{self.name}': depth {self.depth!r}, scale {self.scale!r} or shown {self.shown!r} "
                "is not one of the declared ones"
            )
        options = (self.gate,) if isinstance(self.gate, str) else tuple(option for _, option in self.gate or ())
        unknown = [option for option in options if option not in Tolerances.model_fields]
        if unknown:
            raise ValueError(f"measure '{self.name}': gate {unknown[0]!r} is not a field of Tolerances")

    @property
    def scores_silence(self) -> bool:
        """A question with no expected ids scores 1 on an empty ranking and 0 otherwise, the hit's rule; a
        measure of the labels reads every ranking as it is, scoring each question by `score`."""
        return not self.of_labels

    @property
    def paired_test(self) -> bool:
        """A change between two runs gets a paired test (Holm-corrected with the hit rates'); a measure of the
        labels says nothing about the retriever and would only widen the family corrected over."""
        return not self.of_labels

    @property
    def machine_labels_only(self) -> bool:
        """Listed in the terminal's `Ranking:` line only where a machine judge labelled some documents."""
        return self.shown == LISTED_WITH_MACHINE_LABELS

    def headline_at(self, k: int, cutoffs: Sequence[int]) -> bool:
        """Whether tables show this measure at cut-off `k` of a run of these cut-offs."""
        return self.shown == IN_TABLES or (self.shown == IN_TABLES_AT_DEEPEST and k == cutoffs[-1])

    def cutoffs(self, cutoffs: Sequence[int]) -> tuple[int, ...]:
        return tuple(cutoffs) if self.depth == EVERY_CUTOFF else (cutoffs[-1],)

    def key(self, k: int) -> str:
        return self.naming.key.format(name=self.name, k=k)

    def title(self, k: int) -> str:
        return self.naming.title.format(label=self.label, k=k)

    def short(self, k: int) -> str:
        return self.naming.short.format(name=self.name, k=k)

    def column(self, k: int) -> str:
        return self.naming.column.format(name=self.name, k=k)

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
    depth=EVERY_CUTOFF,
    scale=RATE,
    charted=True,
    gate=((1, "max_top1_drop"), (3, "max_top3_drop")),
    naming=TOP_K,
)
"""The methodology's own figure: counted from each question's first-hit rank, kept exact as counts."""
TESTED = tuple(Figure(HIT_RATE, k) for k, _ in HIT_RATE.gate)
"""The methodology's two rates, top-1 and top-3 (the cut-offs the hit rate's gate names): the headline
figures with exact gates and paired tests on every slice, the ones a history row and a breakdown show."""

MEASURES: Registry[Measure] = measure_registry(
    (
        HIT_RATE,
        Measure("mrr", "MRR", score=reciprocal_rank, charted=True, gate="max_mrr_drop"),
        Measure("ndcg", "nDCG", score=ndcg, charted=True, gate="max_ndcg_drop"),
        Measure("recall", "Recall", score=recall, depth=EVERY_CUTOFF, shown=LISTED, gate="max_recall_drop"),
        Measure("judged", "Judged", score=judged, depth=EVERY_CUTOFF, scale=RATE, shown=IN_TABLES_AT_DEEPEST, of_labels=True),
        # judged by a person or a machine judge (docs/labels.md): kept beside judged@k, never in its place
        Measure(
            "judged_any",
            "Judged (any)",
            score=judged_any,
            depth=EVERY_CUTOFF,
            scale=RATE,
            shown=LISTED_WITH_MACHINE_LABELS,
            of_labels=True,
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


def question_scores(relevance: Relevance, cutoffs: Sequence[int], scored: Sequence[Figure]) -> dict[str, np.ndarray]:
    """Every question's score for each figure (a ranking measure at a cut-off), one array per key.

    A question with no expected ids scores 1 when nothing was retrieved and 0 otherwise, on every measure
    that `scores_silence`: silence is the right answer to a question nothing answers.
    """
    import numpy as np

    ranked = Ranked.of(relevance, cutoffs[-1])
    silence = np.where(relevance.retrieved == 0, 1.0, 0.0)
    unlabelled = relevance.expected == 0
    return {
        figure.key: np.where(unlabelled & figure.measure.scores_silence, silence, figure.measure.score(ranked, figure.k))
        for figure in scored
    }


@dataclass(frozen=True)
class Gate:
    """A figure held to a tolerance: the `Tolerances` field its measure names, and the value it holds."""

    figure: Figure
    option: str
    tolerance: float


def gates(tolerances: Tolerances, cutoffs: Sequence[int]) -> tuple[Gate, ...]:
    """Every figure at `cutoffs` that a set tolerance gates, in declaration order: the one reading of the
    tolerances the measures name."""
    values = tolerances.model_dump()
    found = []
    for measure in MEASURES.values():
        for k in measure.cutoffs(cutoffs):
            option = measure.gate_option(k, cutoffs)
            if option is not None and values[option] is not None:
                found.append(Gate(Figure(measure, k), option, values[option]))
    return tuple(found)


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
