"""`retrieval-eval coverage SET LOG`: how much of a query log's traffic a golden set covers, and its gaps."""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_pipeline.cli.common import (
    FiniteFloatRange,
    config_option,
    json_option,
    load_project,
    refuse_output_over_input,
    status,
    stdout_console,
)
from retrieval_pipeline.cli.errors import CommandError
from retrieval_pipeline.core.base.formatting import counted

ROWS_SHOWN = 10
"""Questions and uncovered clusters the terminal lists, most traffic first, unless --all (--json: every one)."""


@click.command("coverage")
@click.argument("set_name", metavar="SET")
@click.argument("log", metavar="LOG")
@config_option
@json_option
@click.option("--retriever", help="Embed with this configured retriever's encoder (default: the first that embeds).")
@click.option("--lexical", is_flag=True, help="Compare by the lexical analyzer (normalised BM25) even when a retriever embeds.")
@click.option("--threshold", type=FiniteFloatRange(0, 1), help="Least similarity to count as covered (coverage.threshold).")
@click.option("--sample", type=click.IntRange(min=1), help="Write N uncovered queries, sampled by traffic, to judge (--out).")
@click.option(
    "--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), help="The judging file of --sample (.csv or .jsonl)."
)
@click.option("--seed", type=int, default=0, show_default=True, help="The sample's random seed.")
@click.option(
    "--depth", type=click.IntRange(min=1), default=10, show_default=True, help="Each retriever's top K for a sampled query."
)
@click.option(
    "--from", "rankers", multiple=True, help="A retriever that finds the sampled queries' documents (default: every one)."
)
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help=f"List every asked question and uncovered cluster, not the {ROWS_SHOWN} with most traffic.",
)
def coverage(
    set_name, log, config_path, as_json, retriever, lexical, threshold, sample, out_path, seed, depth, rankers, show_all
) -> None:
    """How much of LOG's traffic (a `query_logs` name or a log file) SET (a configured set or a set file)
    covers: each distinct query goes to its nearest golden question when at least --threshold alike.
    Lists the most asked questions, the largest clusters of uncovered traffic (with example queries only
    where the log says `examples: true`; --all: every one, --json: everything) and the covered traffic
    that reads as GAP or MATCH. With --sample N --out
    FILE, writes uncovered queries for `judge`, then `judge apply FILE SET_FILE` adds them as questions."""
    from retrieval_pipeline.core.services.traffic.coverage import measure_coverage, named_set
    from retrieval_pipeline.core.services.views.coverage_view import coverage_view

    if (sample is None) != (out_path is None):
        raise CommandError("--sample N and --out FILE go together")
    config = load_project(config_path)
    if out_path is not None:
        refuse_output_over_input(out_path, {"set file": Path(set_name), "query log": config.query_log(log)[1]})
    question_set = named_set(config, set_name)
    with status("Measuring coverage"):
        measured = measure_coverage(config, question_set, log, retriever=retriever, lexical=lexical, threshold=threshold)
    view = coverage_view(measured, question_set.identifier, log)
    if sample is not None:
        from retrieval_pipeline.core.services.labels.judging_files import write_judging_file
        from retrieval_pipeline.core.services.traffic.sampling import sample_rows

        rows = sample_rows(config, measured, log, sample, seed, rankers, depth)
        write_judging_file(rows, out_path)
    if as_json:
        from retrieval_pipeline.cli.render.payloads import emit

        emit(view.to_dict())
    else:
        _print(view, None if show_all else ROWS_SHOWN)
    if sample is not None and not as_json:
        queries = len({row["question_id"] for row in rows})
        stdout_console().print(
            f"Sampled {counted(queries, 'uncovered query', 'uncovered queries')}, {counted(len(rows), 'row')} to judge, into {out_path}",
            markup=False,
        )


def _print(view, shown: int | None) -> None:
    """Rows with traffic only, at most `shown` of each table (None: all), and a line for those left out."""
    from rich.table import Table

    from retrieval_pipeline.core.base.formatting import percent, percent_or_blank, shortened

    console = stdout_console()
    covered = percent_or_blank(view.covered_share) or "-"
    console.print(
        f"Set {view.set_identifier} against log {view.log} ({view.method}, threshold {view.threshold:g}): "
        f"{covered} of {view.total:,} queries covered; {view.covered_distinct:,} of {view.distinct:,} distinct",
        markup=False,
    )
    logged = f"; logged {view.first_timestamp} to {view.last_timestamp}" if view.first_timestamp else ""
    console.print(f"Lines read: {view.lines:,}; bad: {view.bad_lines:,}; blank: {view.blank_lines:,}{logged}", markup=False)
    if view.match_share is not None:
        console.print(f"Covered traffic: {percent(view.match_share)} MATCH, {percent(view.gap_share)} GAP", markup=False)
    table = Table(title="Most asked questions", title_justify="left")
    for header, justify in (("question", "left"), ("traffic", "right"), ("share", "right")):
        table.add_column(header, justify=justify)
    for row in view.asked_questions[:shown]:
        table.add_row(row.question_id, f"{row.traffic:,}", percent_or_blank(row.share))
    if view.asked_questions:
        console.print(table)
    _left_out(console, view, view.asked_questions[shown:] if shown else (), "more asked question")
    console.print(f"Questions with no traffic: {len(view.unassigned_questions)} of {len(view.questions)}", markup=False)
    clusters = Table(title="Uncovered traffic by cluster", title_justify="left")
    for header, justify in (
        ("#", "right"),
        ("traffic", "right"),
        ("share", "right"),
        ("distinct", "right"),
        ("examples", "left"),
    ):
        clusters.add_column(header, justify=justify)
    for row in view.clusters[:shown]:
        examples = " | ".join(shortened(example, 60) for example in row.examples) if view.examples else "(examples: false)"
        clusters.add_row(str(row.rank), f"{row.traffic:,}", percent_or_blank(row.share), f"{row.distinct:,}", examples)
    if view.clusters:
        console.print(clusters)
    _left_out(console, view, view.clusters[shown:] if shown else (), "more cluster")


def _left_out(console, view, rows, noun: str) -> None:
    """`4 more clusters: 322 queries, 21.3% of the traffic (--all lists every one)`; nothing when none is."""
    from retrieval_pipeline.core.base.formatting import percent_or_blank

    if rows:
        traffic = sum(row.traffic for row in rows)
        share = percent_or_blank(traffic / view.total if view.total else None) or "-"
        console.print(
            f"{counted(len(rows), noun)}: {traffic:,} queries, {share} of the traffic (--all lists every one)", markup=False
        )
