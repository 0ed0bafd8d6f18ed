"""Rendering what the paired tests say: per-slice differences, which survive Holm's correction, and the
smallest drop the set could detect, as the core's views state them."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from retrieval_pipeline.core.services.views.evaluation_view import EvaluationView
from retrieval_pipeline.core.services.views.slice_rows import SliceTests


def slice_table(title: str, tests: SliceTests) -> Table:
    table = Table(title=f"{title} (Holm-corrected over {len(tests.rows)} tests)", title_justify="left")
    headers = (
        "slice",
        "key",
        "figure",
        "questions",
        "Δ",
        "95% CI of Δ",
        "test",
        "p",
        "corrected p",
        f"≤ {tests.significance_text}",
    )
    for header in headers:
        table.add_column(header, justify="left" if header in ("slice", "key", "test") else "right")
    for row in tests.rows:
        delta = row.test.delta
        style = "" if abs(delta) < 1e-12 else ("green" if delta > 0 else "red")
        table.add_row(
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
        )
    return table


def print_significance(console: Console, view: EvaluationView) -> None:
    changes = view.run.ranking_changes
    if changes:
        console.print("Ranking against the baseline: " + " · ".join(f"{row.title} {row.checked_text}" for row in changes))
    if view.slice_tests.rows:
        console.print(slice_table("Paired tests by slice", view.slice_tests))
        console.print(view.slice_tests.surviving_sentence)
        console.print(view.detectable_sentence)
