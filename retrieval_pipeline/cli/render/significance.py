"""Rendering what the paired tests say: per-slice differences, which survive Holm's correction, and the
smallest drop the set could detect, as the core's views state them."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from retrieval_pipeline.cli.render.fitted_tables import Column, print_fitted
from retrieval_pipeline.core.services.views.evaluation_view import EvaluationView
from retrieval_pipeline.core.services.views.slice_rows import SliceTests


def print_slice_table(console: Console, title: str, tests: SliceTests) -> None:
    """In a narrow terminal the interval, the test's name, the question count, the uncorrected p and the
    verdict column are left out in that order; the slice, the figure, Δ and the corrected p never."""
    columns = [
        Column("slice", "left", identifier=True),
        Column("key", "left", identifier=True),
        Column("figure"),
        Column("questions", optional=3),
        Column("Δ"),
        Column("95% CI of Δ", optional=5),
        Column("test", "left", optional=4),
        Column("p", optional=2),
        Column("corrected p"),
        Column(f"≤ {tests.significance_text}", optional=1),
    ]
    rows = []
    for row in tests.rows:
        delta = row.test.delta
        style = "" if abs(delta) < 1e-12 else ("green" if delta > 0 else "red")
        rows.append(
            [
                row.test.slice,
                row.test.key,
                row.figure.title,
                str(row.test.questions),
                Text(row.delta_text, style=style),
                row.interval_text,
                row.test_name,
                row.p_text,
                Text(row.corrected_text, style="bold" if row.survives else ""),
                "survives" if row.survives else "—",
            ]
        )
    print_fitted(console, f"{title} (Holm-corrected over {len(tests.rows)} tests)", columns, rows)


def print_significance(console: Console, view: EvaluationView) -> None:
    changes = view.run.ranking_changes
    if changes:
        console.print("Ranking against the baseline: " + " · ".join(f"{row.title} {row.checked_text}" for row in changes))
    if view.slice_tests.rows:
        print_slice_table(console, "Paired tests by slice", view.slice_tests)
        console.print(view.slice_tests.surviving_sentence)
        console.print(view.detectable_sentence)
