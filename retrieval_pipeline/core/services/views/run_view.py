"""A run as rows: every declared figure, its latency and its breakdowns (form, hard class, turn depth); with the
check's report and baseline, the baseline's figures and the changes beside them.

The figures are the declarations' (`measures.figures`, read when the view is built), so a measure added
there is a row here, and so a line, a column, a key or a cell in every output.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from retrieval_pipeline.core.retrieval.latency import BATCH_MEAN
from retrieval_pipeline.core.scoring.checks.verdicts import RegressionReport, Verdict
from retrieval_pipeline.core.scoring.measures import Figure, figures
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.set_versions import SetChanges
from retrieval_pipeline.core.scoring.slices import FORM, HARD_CLASS, SLICES, TURN_DEPTH
from retrieval_pipeline.core.scoring.stats.slice_tests import TESTED_CUTOFFS
from retrieval_pipeline.core.scoring.turns import ConversationsHit, conversations_all_hit
from retrieval_pipeline.core.services.views.breakdowns import Breakdown, breakdown
from retrieval_pipeline.core.services.views.figure_rows import FigureRow, LatencyRow, is_hit_rate
from retrieval_pipeline.core.services.views.turns_view import conversations_text

JUDGED = (Verdict.PASS, Verdict.REGRESSION)
"""Verdicts of a run judged against its baseline: the reports show its changes. An inconclusive run's
changes stay in the check's own figures (`checked`), the terminal and the JSON."""
REPORTED_LATENCY = ("p95", BATCH_MEAN)
"""The latency a report shows: the p95 a tolerance gates, or a batched run's mean (it has no percentile)."""


@dataclass(frozen=True)
class RunView:
    result: RunResult
    rates: tuple[FigureRow, ...]
    """The hit rate at every cut-off."""
    ranking: tuple[FigureRow, ...]
    """Every ranking figure, headline or not."""
    latency: tuple[LatencyRow, ...]
    slices: tuple[Breakdown, ...]
    """One per declared slice (slices.SLICES), in their order, with rows or without."""
    conversations: ConversationsHit | None = None
    """A run of conversations: those whose every turn hit in the top 3; None without turns."""

    @property
    def conversations_text(self) -> str | None:
        return conversations_text(self.conversations) if self.conversations is not None else None

    @property
    def headline(self) -> tuple[FigureRow, ...]:
        """What tables and reports show: the declarations' headline figures (Recall stays in JSON)."""
        return tuple(
            row for row in (*self.rates, *self.ranking) if row.figure.measure.headline_at(row.figure.k, self.result.cutoffs)
        )

    @property
    def headline_ranking(self) -> tuple[FigureRow, ...]:
        return tuple(row for row in self.ranking if row.figure.measure.headline_at(row.figure.k, self.result.cutoffs))

    @property
    def listed_ranking(self) -> tuple[FigureRow, ...]:
        """The ranking figures the terminal lists in a line: a measure of machine labels only once a machine
        judge labelled some of the run's documents (until then it repeats judged@k)."""
        machine_labelled = self.result.questions.relevance.machine_judged is not None
        return tuple(row for row in self.ranking if machine_labelled or not row.figure.measure.machine_labels_only)

    @property
    def tested(self) -> tuple[FigureRow, ...]:
        """The methodology's two rates, top-1 and top-3: the ones with paired tests and exact gates."""
        return tuple(row for row in self.rates if row.figure.k in TESTED_CUTOFFS)

    @property
    def ranking_changes(self) -> tuple[FigureRow, ...]:
        """The ranking figures the check compared (both runs have them), each with its `checked` change."""
        return tuple(row for row in self.ranking if row.checked is not None)

    @property
    def reported_latency(self) -> LatencyRow | None:
        return next((row for row in self.latency if row.statistic in REPORTED_LATENCY), None)

    def slice(self, name: str) -> Breakdown:
        return next(shown for shown in self.slices if shown.name == name)

    @property
    def by_form(self) -> Breakdown:
        return self.slice(FORM.name)

    @property
    def by_hard_class(self) -> Breakdown:
        return self.slice(HARD_CLASS.name)

    @property
    def by_turn_depth(self) -> Breakdown:
        return self.slice(TURN_DEPTH.name)

    @property
    def breakdowns(self) -> tuple[Breakdown, ...]:
        """The breakdowns the run has (a set without hard classes or turns has no such table)."""
        return tuple(shown for shown in self.slices if shown.rows)

    @property
    def listed(self) -> tuple[Breakdown, ...]:
        """The breakdowns a document lists: with rows, or empty where the slice is always listed."""
        return tuple(shown for shown in self.slices if shown.listed)


def edited(changes: SetChanges | None) -> bool:
    """The set differs from the baseline's, or could not be checked question by question."""
    return changes is not None and (changes.changed or changes.by_labels)


@dataclass(frozen=True)
class _Against:
    """What a run's rows are set against: the baseline, the check's own figures, whether the reports show
    changes at all (`judged`) and whether a figure the check did not measure may show a plain difference
    (`unchanged`: after a set edit only the check's figures, on the unchanged questions, compare like with
    like)."""

    baseline: RunResult | None = None
    """What the changes were computed from: the baseline rescored under the current labels, when it was."""
    stored: RunResult | None = None
    """The baseline as stored, when `baseline` is its rescoring; None otherwise."""
    judged: bool = False
    unchanged: bool = True
    tested: dict[int, tuple[float, float]] = field(default_factory=dict)
    """The check's change and p-value at each tested cut-off."""
    checked: dict[str, float] = field(default_factory=dict)
    """The check's change of each ranking figure both runs have."""

    @property
    def rescored(self) -> bool:
        return self.stored is not None

    def change(self, now: float, then: float | None, checked: float | None = None) -> float | None:
        if not self.judged or then is None:
            return None
        if checked is not None:
            return checked
        return now - then if self.unchanged else None


def run_view(run: RunResult, report: RegressionReport | None = None, baseline: RunResult | None = None) -> RunView:
    """Without a report, the run's own figures; with the check's report and baseline, theirs beside them:
    the baseline's as the check compared it (rescored under the current labels when it was, its figures as
    stored beside them)."""
    against = _Against()
    if report is not None:
        rescoring = report.rescored_baseline
        against = _Against(
            rescoring.rescored if rescoring is not None else baseline,
            rescoring.stored if rescoring is not None else None,
            report.verdict in JUDGED,
            not edited(report.set_changes),
            {k: (report.hit_rate_delta(k), report.hit_rate_p_value(k)) for k in TESTED_CUTOFFS},
            dict(report.metric_deltas),
        )
    declared = figures(run.cutoffs)
    rated, ranking = [f for f in declared if is_hit_rate(f)], [f for f in declared if not is_hit_rate(f)]
    return RunView(
        result=run,
        rates=_rate_rows(run, rated, against),
        ranking=_ranking_rows(run, ranking, against),
        latency=_latency(run, against),
        slices=tuple(
            breakdown(
                sliced,
                run.breakdown(sliced.name),
                run.group_metrics(sliced.name),
                ranking,
                report.deltas_by(sliced.name) if report is not None else (),
                against.judged,
                run.cutoffs,
            )
            for sliced in SLICES
        ),
        conversations=conversations_all_hit(run),
    )


def _hit_rate(run: RunResult | None, k: int) -> float | None:
    return run.hit_rate(k) if run is not None and k in run.cutoffs else None


def _rate_rows(run: RunResult, rated: list[Figure], against: _Against) -> tuple[FigureRow, ...]:
    intervals = run.intervals()
    rows = []
    for figure in rated:
        k = figure.k
        now, then = run.hit_rate(k), _hit_rate(against.baseline, k)
        checked, p_value = against.tested.get(k, (None, None))
        change = against.change(now, then, checked)
        rows.append(
            FigureRow(
                figure,
                now,
                run.question_count,
                run.hit_count(k),
                intervals.get(figure.key),
                then,
                change,
                checked,
                p_value,
                stored_baseline=_hit_rate(against.stored, k),
                rescored=against.rescored,
            )
        )
    return tuple(rows)


def _ranking_rows(run: RunResult, ranking: list[Figure], against: _Against) -> tuple[FigureRow, ...]:
    metrics = run.metrics()
    before = against.baseline.metrics() if against.baseline is not None else {}
    stored = against.stored.metrics() if against.stored is not None else {}
    rows = []
    for figure in ranking:
        now, then = metrics[figure.key], before.get(figure.key)
        change = against.change(now, then)
        rows.append(
            FigureRow(
                figure,
                now,
                run.question_count,
                baseline=then,
                change=change,
                checked=against.checked.get(figure.key),
                stored_baseline=stored.get(figure.key),
                rescored=against.rescored,
            )
        )
    return tuple(rows)


def _latency(run: RunResult, against: _Against) -> tuple[LatencyRow, ...]:
    then = against.baseline.latency_summary() if against.baseline is not None else {}
    return tuple(
        LatencyRow(name, value, then.get(name), value - then[name] if name in then and against.judged else None)
        for name, value in run.latency_summary().items()
    )
