"""Rendering what the paired tests say: per-slice differences, which survive Holm's correction, and the
smallest drop the set could detect. The figures all come from the core."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from retrieval_pipeline.cli.render import metric_label, p_value, signed_pp
from retrieval_pipeline.core.scoring.regression import RegressionReport
from retrieval_pipeline.core.scoring.slice_tests import SliceTest


def slice_table(title: str, tests: Sequence[SliceTest], significance: float) -> Table:
    table = Table(title=f"{title} (exact McNemar, Holm-corrected over {len(tests)} tests)", title_justify="left")
    for header in ("slice", "key", "cut-off", "questions", "Δ", "p", "corrected p", f"≤ {significance:g}"):
        table.add_column(header, justify="left" if header in ("slice", "key") else "right")
    for test in tests:
        style = "" if abs(test.delta) < 1e-12 else ("green" if test.delta > 0 else "red")
        survives = test.survives(significance)
        table.add_row(
            test.slice,
            test.key,
            f"top-{test.k}",
            str(test.questions),
            Text(signed_pp(test.delta), style=style),
            p_value(test.p_value),
            Text(p_value(test.corrected_p_value), style="bold" if survives else ""),
            "survives" if survives else "—",
        )
    return table


def surviving_line(tests: Sequence[SliceTest], significance: float) -> str:
    """Which differences survive the correction: the sentence a reader needs before any table."""
    surviving = [t for t in tests if t.survives(significance)]
    if not surviving:
        return f"No difference survives Holm correction at {significance:g} over {len(tests)} tests."
    listed = ", ".join(f"{_slice_name(t)} top-{t.k} {signed_pp(t.delta)}" for t in surviving)
    return f"Surviving Holm correction at {significance:g} over {len(tests)} tests: {listed}."


def detectable_line(report: RegressionReport) -> str:
    tests = len(report.slice_tests)
    paired = report.slice_tests[0].questions if report.slice_tests else 0
    if report.minimum_detectable_drop is None:
        return (
            f"Set too small: on {paired} compared questions no drop can reach significance {report.significance:g} "
            f"(Holm over {tests} tests)."
        )
    return (
        f"Smallest detectable drop at {report.significance:g} (Holm over {tests} tests): "
        f"{report.minimum_detectable_drop * 100:.1f} pp on {paired} compared questions."
    )


def print_significance(console: Console, report: RegressionReport) -> None:
    if report.metric_deltas:
        console.print(
            "Ranking against the baseline: "
            + " · ".join(f"{metric_label(name)} {round(delta, 3) + 0.0:+.3f}" for name, delta in report.metric_deltas)
        )
    if report.slice_tests:
        console.print(slice_table("Paired tests by slice", report.slice_tests, report.significance))
        console.print(surviving_line(report.slice_tests, report.significance))
        console.print(detectable_line(report))


def _slice_name(test: SliceTest) -> str:
    return "overall" if test.slice == "overall" else f"{test.slice.replace('_', ' ')} {test.key}"
