"""`retrieval-eval report SET RETRIEVER`: the latest stored run as an HTML page and a Markdown summary."""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_pipeline.cli.common import (
    config_option,
    labels_option,
    load_project,
    no_stored_runs,
    open_store,
    store_option,
    traffic_option,
)

FILE = click.Path(dir_okay=False, writable=True, path_type=Path)


def markdown_option(function):
    return click.option(
        "--markdown",
        "markdown_path",
        type=FILE,
        metavar="FILE",
        help='Write a Markdown summary (verdict and rates table) to FILE, e.g. "$GITHUB_STEP_SUMMARY".',
    )(function)


def write_markdown(path: Path, view, note: str | None = None) -> None:
    from retrieval_pipeline.core.base.durable import write_text_atomically

    write_text_atomically(path, view.to_markdown(note))


@click.command("report")
@click.argument("set_identifier", metavar="SET")
@click.argument("retriever_identifier", metavar="RETRIEVER")
@config_option
@store_option
@click.option("--html", "html_path", type=FILE, metavar="FILE", help="Write a self-contained HTML page to FILE.")
@markdown_option
@labels_option
@click.option("--runs", type=click.IntRange(min=1), default=20, show_default=True, help="Runs drawn in the history chart.")
@click.option(
    "--rejudge",
    is_flag=True,
    help="Judge the run again with the configuration's tolerances of today instead of showing the verdict "
    "recorded with it; the output says it was re-judged.",
)
@traffic_option
def report(
    set_identifier: str,
    retriever_identifier: str,
    config_path,
    store_uri,
    html_path,
    markdown_path,
    labels: str | None,
    runs: int,
    rejudge: bool,
    traffic_log: str | None,
) -> None:
    """Report the latest stored run of SET against RETRIEVER: the verdict recorded with it (the one CI acted
    on) against the run its check compared it with, rates, breakdowns, flipped questions, and the pair's
    history chart. --rejudge judges it again with today's tolerances, labelled as such. Traffic-weighted
    figures are shown when the run was weighted by a query log (the weights stored with it), or, with
    --traffic LOG, weighted by that log as it is today.

    --html writes a page that opens offline (the chart is embedded); --markdown writes a summary for CI job
    summaries. Without either, the Markdown summary is printed."""
    from retrieval_pipeline.cli.errors import CommandError
    from retrieval_pipeline.core.services.evaluation.chart_data import history_chart_data
    from retrieval_pipeline.core.services.evaluation.record import latest_evaluation
    from retrieval_pipeline.core.services.traffic.weights import set_traffic
    from retrieval_pipeline.core.services.views.evaluation_view import evaluation_view
    from retrieval_pipeline.core.storage.store import HistoryKey

    config = load_project(config_path)
    store = open_store(store_uri, config)
    key = HistoryKey(set_identifier, retriever_identifier)
    question_set = config.question_sets[set_identifier] if set_identifier in config.question_sets else None
    if traffic_log is not None and question_set is None:
        raise CommandError(f"--traffic needs set '{set_identifier}' in the configuration: its questions are weighed by the log")
    traffic = set_traffic(config, question_set, traffic_log) if traffic_log is not None else None
    choice = labels or config.labels
    evaluation = latest_evaluation(store, key, config.tolerances, question_set, rejudge=rejudge, choice=choice, traffic=traffic)
    if evaluation is None:
        raise no_stored_runs(store, key)
    view = evaluation_view(evaluation)
    note = _note(store, evaluation, choice, rejudge)
    if html_path is not None:
        from retrieval_pipeline.core.base.durable import write_text_atomically
        from retrieval_pipeline.reports.html import html_report

        baseline = view.verdict.baseline_run_id
        history = history_chart_data(store, key, config.tolerances, runs=runs, baseline_run_id=baseline, labels=question_set)
        write_text_atomically(html_path, html_report(view, history, store.uri, note))
        click.echo(f"Wrote {html_path}", err=True)
    if markdown_path is not None:
        write_markdown(markdown_path, view, note)
        click.echo(f"Wrote {markdown_path}", err=True)
    if html_path is None and markdown_path is None:
        click.echo(view.to_markdown(note), nl=False)


def _note(store, evaluation, choice: str, rejudge: bool) -> str | None:
    """What a reader must know before trusting the verdict shown: it is not the one recorded with the run."""
    stored_labels = store.read_summary(evaluation.stored)["labels"]
    if evaluation.run.labels != stored_labels:
        return f"Rescored under {choice} labels (stored under {stored_labels}) and judged again with today's tolerances."
    if not rejudge:
        return None
    recorded = store.read_summary(evaluation.stored)["verdict"]
    at_the_time = f"the verdict recorded with the run was {recorded.replace('_', ' ')}" if recorded else "no verdict was recorded"
    return f"Re-judged (--rejudge) with the configuration's tolerances of today; {at_the_time}."
