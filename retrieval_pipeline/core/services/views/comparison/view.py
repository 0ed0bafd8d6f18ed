"""A comparison of retrievers as one view: each run's figures beside its paired tests against the
reference, the groups side by side, and each run's slice tests, for the terminal and the JSON alike.

The view's two documents sit beside it, so the view depends on nothing that lays it out: the
`compare --json` document (`to_dict`: the runs side by side, their paired tests and the questions they
disagree on) and the Markdown summary (`to_markdown`: the retrievers side by side with their paired tests)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from retrieval_pipeline.core.scoring.checks.comparison import Comparison, Disagreement, GroupComparison
from retrieval_pipeline.core.scoring.measures import Figure
from retrieval_pipeline.core.scoring.set_versions import SetChanges
from retrieval_pipeline.core.scoring.slices import SLICES
from retrieval_pipeline.core.scoring.traffic import WeightedFigures
from retrieval_pipeline.core.scoring.turns import REWRITE_MODE
from retrieval_pipeline.core.services.views import documents
from retrieval_pipeline.core.services.views.breakdowns import Breakdown
from retrieval_pipeline.core.services.views.figure_rows import MISSING, FigureRow
from retrieval_pipeline.core.services.views.question_rows import QuestionRows
from retrieval_pipeline.core.services.views.run_view import RunView, run_view
from retrieval_pipeline.core.services.views.slice_rows import SliceRow, SliceTests, slice_tests
from retrieval_pipeline.core.services.views.traffic_view import TrafficView, traffic_view
from retrieval_pipeline.core.services.views.turns_view import GapView, gap_lines, gap_views


@dataclass(frozen=True)
class ComparedRun:
    run: RunView
    overall: tuple[SliceRow | None, ...]
    """The overall paired test against the reference at each tested figure (None: this is the reference)."""
    ranking: tuple[FigureRow | None, ...]
    """The run's figure for each of the comparison's ranking columns (None: this run lacks it)."""
    slice_tests: SliceTests
    traffic: TrafficView | None = None
    """The run's traffic-weighted figures, their changes against the reference's; None without a log."""

    @property
    def identifier(self) -> str:
        return self.run.result.retriever_identifier


@dataclass(frozen=True)
class ComparedGroup:
    key: str
    questions: int
    rates: tuple[tuple[FigureRow, ...] | None, ...]
    """Each run's rates in the group (None: the group is absent from that run)."""


@dataclass(frozen=True)
class GroupTable:
    title: str
    label: str
    figures: tuple[Figure, ...]
    """The rates each run has in a group, in order."""
    groups: tuple[ComparedGroup, ...]


@dataclass(frozen=True)
class ComparisonView:
    set_identifier: str
    runs: tuple[ComparedRun, ...]
    """The reference first."""
    tested: tuple[Figure, ...]
    ranking: tuple[Figure, ...]
    """The reference's headline ranking figures: the comparison's ranking columns."""
    set_changes: tuple[SetChanges, ...]
    """One per run after the reference, against the reference's questions."""
    group_tables: tuple[GroupTable, ...]
    disagreements: tuple[Disagreement, ...]
    significance: float
    saved: Mapping[str, tuple[str, str]] | None = None
    """Each retriever's stored run id and regression verdict when the runs were saved; None when not."""
    rewrite_gaps: tuple[GapView, ...] = ()
    """With a `rewrite` run among the compared: every other run's gap beside it (turns_view.py)."""

    def to_dict(self) -> dict[str, Any]:
        """The `retrieval-eval compare --json` document."""
        return comparison_document(self)

    def to_markdown(self) -> str:
        """The runs' headline figures side by side and their paired tests, for a job summary or a comment."""
        return comparison_markdown(self)

    @property
    def reference(self) -> ComparedRun:
        return self.runs[0]

    @property
    def others(self) -> tuple[ComparedRun, ...]:
        return self.runs[1:]

    @property
    def identifiers(self) -> tuple[str, ...]:
        return tuple(compared.identifier for compared in self.runs)

    @property
    def traffic(self) -> TrafficView | None:
        """The reference's weighted figures: what the weighted table's sentence is about; None without a log."""
        return self.reference.traffic

    @property
    def set_change_lines(self) -> tuple[str, ...]:
        return tuple(
            f"{compared.identifier}: {changes.sentence(against='the reference run')}"
            for compared, changes in zip(self.others, self.set_changes)
            if changes.changed
        )


def comparison_view(
    comparison: Comparison,
    saved: Mapping[str, tuple[str, str]] | None = None,
    weighted: Sequence[WeightedFigures] | None = None,
) -> ComparisonView:
    """`saved`: each retriever's stored run id and verdict sentence, when the runs were saved; `weighted`:
    each run's traffic-weighted figures (the same traffic), when a log weighed them. With a run asked in
    the `rewrite` query mode among them, every other run's gap beside it."""
    views = [run_view(run) for run in comparison.runs]
    weighted = list(weighted) if weighted is not None else [None] * len(views)
    tested = tuple(row.figure for row in views[0].tested)
    ranking = tuple(row.figure for row in views[0].headline_ranking)
    runs = []
    for view, figures in zip(views, weighted):
        identifier = view.result.retriever_identifier
        tests = slice_tests(comparison.tests_of(identifier), comparison.significance)
        tests_by_key = {row.figure.key: row for row in tests.overall}  # Recall@1 shares top-1's cut-off, not its key
        rows_by_key = {row.key: row for row in view.ranking}
        overall = tuple(tests_by_key.get(figure.key) for figure in tested)
        traffic = _weighted_against(figures, weighted[0], view.result.cutoffs)
        runs.append(ComparedRun(view, overall, tuple(rows_by_key.get(figure.key) for figure in ranking), tests, traffic))
    tables = [(comparison.groups_by(s.name), [view.slice(s.name) for view in views]) for s in SLICES]
    return ComparisonView(
        set_identifier=comparison.set_identifier,
        runs=tuple(runs),
        tested=tested,
        ranking=ranking,
        set_changes=comparison.set_changes,
        group_tables=tuple(_group_table(groups, breakdowns) for groups, breakdowns in tables if groups),
        disagreements=comparison.disagreements,
        significance=comparison.significance,
        saved=saved,
        rewrite_gaps=gap_views(comparison.runs, next((r for r in comparison.runs if r.query_mode == REWRITE_MODE), None)),
    )


def _weighted_against(
    figures: WeightedFigures | None, reference: WeightedFigures | None, cutoffs: tuple[int, ...]
) -> TrafficView | None:
    """A run's weighted figures with their change against the reference's (none for the reference)."""
    if figures is None or reference is None:
        return None
    deltas = None if figures is reference else {key: value - reference.values[key] for key, value in figures.values.items()}
    return traffic_view(figures, reference if deltas is not None else None, deltas, cutoffs=cutoffs)


def _group_table(groups: tuple[GroupComparison, ...], breakdowns: list[Breakdown]) -> GroupTable:
    """Each group's rates per run, read from that run's own breakdown rows."""
    rows = [{row.key: row for row in breakdown.rows} for breakdown in breakdowns]
    compared = []
    for group in groups:
        questions = next((rates.questions for rates in group.rates if rates is not None), 0)
        cells = tuple(by_key[group.key].rates if group.key in by_key else None for by_key in rows)
        compared.append(ComparedGroup(group.key, questions, cells))
    first = breakdowns[0]
    return GroupTable(first.title, first.label, first.figures, tuple(compared))


def comparison_document(view: ComparisonView) -> dict[str, Any]:
    """`saved` is whether the runs were saved (`compare --save`); a saved run has its id and verdict."""
    saved, reference = view.saved, view.reference.run.result
    positions = [reference.questions.positions[d.question_id] for d in view.disagreements]
    rows = [list(QuestionRows(compared.run.result, positions)) for compared in view.runs]  # the runs line up question by question
    return {
        "set": view.set_identifier,
        "question_count": reference.question_count,
        "labels": reference.labels,
        "reference": view.reference.identifier,
        "set_changes": {
            compared.identifier: documents.set_changes(changes) for compared, changes in zip(view.others, view.set_changes)
        },
        "saved": saved is not None,
        "runs": [_compared_run(compared, (saved or {}).get(compared.identifier)) for compared in view.runs],
        "paired_tests": [
            {
                "reference": view.reference.identifier,
                "retriever": compared.identifier,
                "measure": row.figure.key,
                "k": row.test.k,
                "reference_only_hits": row.test.first_only,
                "retriever_only_hits": row.test.second_only,
                "delta": row.test.delta,
                "delta_interval": None if row.test.interval is None else list(row.test.interval),
                "p_value": row.test.p_value,
                "corrected_p_value": row.test.corrected_p_value,
            }
            for compared in view.others
            for row in compared.slice_tests.overall
        ],
        "significance": view.significance,
        **({"rewrite_gaps": [gap.to_dict() for gap in view.rewrite_gaps]} if view.rewrite_gaps else {}),
        "slice_tests": {compared.identifier: documents.slice_tests(compared.slice_tests) for compared in view.others},
        "disagreements": [
            {
                "id": d.question_id,
                "form": d.form,
                "hard_class": d.hard_class,
                "expected_document_ids": list(d.expected_document_ids),
                "results": {
                    compared.identifier: {key: value for key, value in row[index].items() if key not in _SHARED}
                    for compared, row in zip(view.runs, rows)
                },
            }
            for index, d in enumerate(view.disagreements)
        ],
    }


_SHARED = ("id", "form", "hard_class", "expected_document_ids")


def _compared_run(compared: ComparedRun, saved: tuple[str, str] | None) -> dict[str, Any]:
    """A fresh run that was not saved has no run id anyone could look up."""
    run_id, verdict = saved if saved else (None, None)
    document = {**documents.run_summary(compared.run), "run_id": run_id, "regression_summary": verdict}
    if compared.traffic is not None:
        document["traffic"] = compared.traffic.to_dict()
    return document


def comparison_markdown(view: ComparisonView) -> str:
    """Each retriever's tested rates with their change and p-value against the reference, then its
    headline ranking figures; under the table what the set edits left out and what survives correction."""
    tested = "".join(f" {figure.title} | Δ {figure.title} | p {figure.title} |" for figure in view.tested)
    ranking = "".join(f" {figure.title} |" for figure in view.ranking)
    lines = [
        f"### Retrieval quality: `{view.set_identifier}`, {len(view.runs)} retrievers compared",
        "",
        f"{view.reference.run.result.question_count} questions; reference `{view.reference.identifier}`; labels {view.reference.run.result.labels}.",
        "",
        f"| retriever |{tested}{ranking}",
        "|---|" + "---:|---:|---:|" * len(view.tested) + "---:|" * len(view.ranking),
        *[_compared_row(compared) for compared in view.runs],
    ]
    if view.traffic is not None:
        lines += ["", *_weighted_comparison(view)]
    if view.set_change_lines:
        lines += ["", *view.set_change_lines]
    approximate = [compared for compared in view.runs if compared.run.result.approximation]
    if approximate:
        lines += ["", *(f"`{c.identifier}`: **{c.run.result.approximation.sentence}**  " for c in approximate)]
    lines += ["", *(f"`{compared.identifier}`: {compared.slice_tests.surviving_sentence}" for compared in view.others)]
    if view.rewrite_gaps:
        lines += ["", *gap_lines(view.rewrite_gaps)]
    return "\n".join(lines) + "\n"


def _weighted_comparison(view: ComparisonView) -> list[str]:
    """Each retriever's traffic-weighted headline figures and their change against the reference's."""
    figures = [row.figure for row in view.traffic.headline]
    return [
        view.traffic.sentence,
        "",
        "| retriever |" + "".join(f" weighted {figure.title} | Δ {figure.title} |" for figure in figures),
        "|---|" + "---:|---:|" * len(figures),
        *[
            f"| `{compared.identifier}` |"
            + "".join(
                f" {row.now_text} | {'ref' if row.change is None else row.change_text} |" for row in compared.traffic.headline
            )
            for compared in view.runs
        ],
    ]


def _compared_row(compared: ComparedRun) -> str:
    cells = [f"`{compared.identifier}`"]
    for rate, test in zip(compared.run.tested, compared.overall):
        cells += [rate.count_text, *(("ref", "ref") if test is None else (test.delta_text, test.p_text))]
    cells += [MISSING if row is None else row.text for row in compared.ranking]
    return "| " + " | ".join(cells) + " |"
