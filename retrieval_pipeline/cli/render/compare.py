"""Rendering a comparison's view: overall with paired tests, breakdowns, disagreeing questions."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from retrieval_pipeline.cli.render.fitted_tables import Column, print_fitted
from retrieval_pipeline.cli.render.significance import print_slice_table
from retrieval_pipeline.cli.render.terminal import hit_mark, print_approximation
from retrieval_pipeline.core.base.formatting import id_list
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.services.views.comparison.view import ComparisonView, GroupTable
from retrieval_pipeline.core.services.views.figure_rows import MISSING
from retrieval_pipeline.core.services.views.turns_view import gap_lines

SIGNIFICANCE_NOTE = (
    "p: two-sided exact McNemar test against the reference (the first retriever), counting only the "
    "questions exactly one of the two hit; p < 0.05 suggests a real difference, a larger p may be noise. "
    "ms: p95 latency per question, or the mean per question where a retriever answers in batches (no percentile exists)."
)


def print_comparison(console: Console, view: ComparisonView, limit: int) -> None:
    reference = view.reference
    console.print(
        f"[bold]{view.set_identifier}[/bold]: {len(view.runs)} retrievers on "
        f"{reference.run.result.question_count} questions; reference {reference.identifier}; labels {reference.run.result.labels}"
    )
    for line in view.set_change_lines:
        console.print(line)
    print_overall(console, view)
    for compared in view.runs:
        print_approximation(console, compared.run.result, compared.identifier)
    console.print(SIGNIFICANCE_NOTE, style="dim")
    print_weighted(console, view)
    for table in view.group_tables:
        print_group_table(console, table, view)
    for line in gap_lines(view.rewrite_gaps):
        console.print(line)
    for compared in view.others:
        print_slice_table(console, f"{compared.identifier} against {reference.identifier} by slice", compared.slice_tests)
        console.print(compared.slice_tests.surviving_sentence)
    print_disagreements(console, view, limit)


def print_overall(console: Console, view: ComparisonView) -> None:
    """Each retriever's tested rates with their paired tests, then its ranking figures and latency: in a
    narrow terminal the ranking figures, latency, errors and top-3 are left out in that order, top-1 never."""
    columns = [Column("retriever", "left", identifier=True)]
    for order, figure in enumerate(view.tested):
        rank = 0 if order == 0 else 6  # top-1's three never; top-3's last of all, its p first
        columns += [
            Column(figure.title, optional=rank),
            Column(f"Δ {figure.title}", optional=rank and rank + 1),
            Column(f"p {figure.title}", optional=rank and rank + 2),
        ]
    columns += [Column(figure.title, optional=12 + order) for order, figure in enumerate(view.ranking)]
    columns += [Column("ms", optional=11), Column("errors", optional=9)]
    rows = []
    for compared in view.runs:
        row: list[str | Text] = [compared.identifier]
        for rate, test in zip(compared.run.tested, compared.overall):
            row.append(rate.count_text)
            if test is None:
                row += ["ref", "ref"]
            else:
                delta, p_value = test.test.delta, test.test.p_value
                style = "" if delta == 0 else ("green" if delta > 0 else "red")
                row += [Text(test.delta_text, style=style), Text(test.p_text, style="bold" if p_value < 0.05 else "")]
        row += [MISSING if cell is None else cell.text for cell in compared.ranking]
        latency = compared.run.reported_latency
        row += [MISSING if latency is None else latency.cell_text, str(len(compared.run.result.errored_question_ids))]
        rows.append(row)
    print_fitted(console, "Overall", columns, rows)


def print_weighted(console: Console, view: ComparisonView) -> None:
    """Each retriever's traffic-weighted headline figures and their change against the reference's, under
    the sentence that says what they stand on; nothing without a traffic log."""
    if view.traffic is None:
        return
    console.print(view.traffic.sentence)
    figures = [row.figure for row in view.traffic.headline]
    columns = [Column("retriever", "left", identifier=True)]
    for order, figure in enumerate(figures):
        columns += [Column(figure.title, optional=2 * order), Column(f"Δ {figure.title}", optional=2 * order + 1)]
    rows = []
    for compared in view.runs:
        cells: list[str | Text] = [compared.identifier]
        for row in compared.traffic.headline:
            cells += [row.now_text, "ref" if row.change is None else row.change_text]
        rows.append(cells)
    print_fitted(console, "Traffic-weighted", columns, rows)


def print_group_table(console: Console, table: GroupTable, view: ComparisonView) -> None:
    """One column per retriever, the later ones left out first where they cannot fit."""
    title = f"{table.title} ({' / '.join(figure.title for figure in table.figures)})"
    columns = [Column(table.label, "left", identifier=True), Column("questions")]
    columns += [Column(identifier, named=True, optional=1 if order else 0) for order, identifier in enumerate(view.identifiers)]
    rows = [
        [
            group.key,
            str(group.questions),
            *(MISSING if rates is None else " / ".join(cell.text for cell in rates) for rates in group.rates),
        ]
        for group in table.groups
    ]
    print_fitted(console, title, columns, rows)


def print_disagreements(console: Console, view: ComparisonView, limit: int) -> None:
    found = view.disagreements
    if not found:
        console.print(f"The retrievers agree on every question ({' and '.join(figure.title for figure in TESTED)}).")
        return
    shown = found if limit == 0 else found[:limit]
    columns = [Column(header, "left", identifier=True) for header in ("id", "form", "class")]
    columns += [Column(identifier, "center", named=True) for identifier in view.identifiers]
    columns.append(Column("expected", "left"))
    rows = []
    for disagreement in shown:
        cells = [Text(" ").join(hit_mark(outcome.hit_at(figure.k)) for figure in TESTED) for outcome in disagreement.outcomes]
        expected = id_list(disagreement.expected_document_ids) if disagreement.expected_document_ids else "(none)"
        rows.append([disagreement.question_id, disagreement.form, disagreement.hard_class or "", *cells, expected])
    print_fitted(
        console,
        f"Disagreements ({len(found)} questions; {' '.join(figure.title for figure in TESTED)} per retriever)",
        columns,
        rows,
    )
    if len(shown) < len(found):
        console.print(f"… and {len(found) - len(shown)} more (--limit 0 lists all, --json has all).")
