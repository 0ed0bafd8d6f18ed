"""Rendering a core `Comparison`: overall with paired tests, breakdowns, disagreeing questions."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from retrieval_pipeline.cli.render import hit_mark, id_list, metric_label, p_value, percent, rate_with_counts, signed_pp
from retrieval_pipeline.cli.render_significance import slice_table, surviving_line
from retrieval_pipeline.core.scoring.comparison import Comparison, GroupComparison

SIGNIFICANCE_NOTE = (
    "p: two-sided exact McNemar test against the reference (the first retriever), counting only the "
    "questions exactly one of the two hit; p < 0.05 suggests a real difference, a larger p may be noise. "
    "ms: p95 latency per question, or the mean per question where a retriever answers in batches (no percentile exists)."
)


def print_comparison(console: Console, comparison: Comparison, limit: int) -> None:
    reference = comparison.reference
    console.print(
        f"[bold]{comparison.set_identifier}[/bold]: {len(comparison.runs)} retrievers on "
        f"{reference.question_count} questions; reference {reference.retriever_identifier}"
    )
    for run, changes in zip(comparison.runs[1:], comparison.set_changes):
        if changes.changed:
            console.print(f"{run.retriever_identifier}: {changes.sentence(against='the reference run')}")
    console.print(overall_table(comparison))
    console.print(SIGNIFICANCE_NOTE, style="dim")
    for title, groups in (("By form", comparison.by_form), ("By hard class", comparison.by_hard_class)):
        if groups:
            console.print(group_table(title, comparison, groups))
    for other in comparison.retriever_identifiers[1:]:
        tests = comparison.tests_of(other)
        console.print(slice_table(f"{other} against {reference.retriever_identifier} by slice", tests, comparison.significance))
        console.print(surviving_line(tests, comparison.significance))
    print_disagreements(console, comparison, limit)


def overall_table(comparison: Comparison) -> Table:
    table = Table(title="Overall", title_justify="left")
    table.add_column("retriever", no_wrap=True)
    for k in (1, 3):
        table.add_column(f"top-{k}", justify="right")
        table.add_column(f"Δ top-{k}", justify="right")
        table.add_column(f"p top-{k}", justify="right")
    metrics = [name for name in comparison.reference.metrics() if not name.startswith("recall@")]
    for name in metrics:
        table.add_column(metric_label(name), justify="right")
    table.add_column("ms", justify="right")
    table.add_column("errors", justify="right")
    for run in comparison.runs:
        row: list[str | Text] = [run.retriever_identifier]
        for k in (1, 3):
            row.append(rate_with_counts(run.hit_count(k), run.question_count, run.hit_rate(k)))
            test = comparison.test(run.retriever_identifier, k)
            if test is None:
                row += ["ref", "ref"]
            else:
                style = "" if test.delta == 0 else ("green" if test.delta > 0 else "red")
                row += [
                    Text(signed_pp(test.delta), style=style),
                    Text(p_value(test.p_value), style="bold" if test.p_value < 0.05 else ""),
                ]
        row += [f"{run.metrics()[name]:.3f}" if name in run.metrics() else "—" for name in metrics]
        row += [_latency_cell(run), str(len(run.errored_question_ids))]
        table.add_row(*row)
    return table


def _latency_cell(run) -> str:
    """p95 when each question was timed, the batch mean (named so) when they were timed in batches."""
    latency = run.latency_summary()
    if "p95" in latency:
        return f"p95 {latency['p95']:.1f}"
    return f"mean {latency['batch_mean']:.1f}" if "batch_mean" in latency else "—"


def group_table(title: str, comparison: Comparison, groups: tuple[GroupComparison, ...]) -> Table:
    table = Table(title=f"{title} (top-1 / top-3)", title_justify="left")
    table.add_column(title.removeprefix("By ").lower())
    table.add_column("questions", justify="right")
    for identifier in comparison.retriever_identifiers:
        table.add_column(identifier, justify="right")
    for group in groups:
        questions = next((rates.questions for rates in group.rates if rates is not None), 0)
        cells = [
            "—" if rates is None else f"{percent(rates.top1_hit_rate)} / {percent(rates.top3_hit_rate)}" for rates in group.rates
        ]
        table.add_row(group.key, str(questions), *cells)
    return table


def print_disagreements(console: Console, comparison: Comparison, limit: int) -> None:
    found = comparison.disagreements
    if not found:
        console.print("The retrievers agree on every question (top-1 and top-3).")
        return
    shown = found if limit == 0 else found[:limit]
    table = Table(title=f"Disagreements ({len(found)} questions; top-1 top-3 per retriever)", title_justify="left")
    for header in ("id", "form", "class"):
        table.add_column(header, no_wrap=True)
    for identifier in comparison.retriever_identifiers:
        table.add_column(identifier, justify="center")
    table.add_column("expected")
    for disagreement in shown:
        cells = []
        for outcome in disagreement.outcomes:
            cells.append(hit_mark(outcome.top1_hit) + Text(" ") + hit_mark(outcome.top3_hit))
        expected = id_list(disagreement.expected_document_ids) if disagreement.expected_document_ids else "(none)"
        table.add_row(disagreement.question_id, disagreement.form, disagreement.hard_class or "", *cells, expected)
    console.print(table)
    if len(shown) < len(found):
        console.print(f"… and {len(found) - len(shown)} more (--limit 0 lists all, --json has all).")
