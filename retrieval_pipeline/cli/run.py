"""`retrieval-eval run SET RETRIEVER`: evaluate, save, and report the regression verdict."""

from __future__ import annotations

import sys
from contextlib import redirect_stdout

import click

from retrieval_pipeline.cli.common import (
    config_option,
    identifiers,
    json_option,
    labels_option,
    load_project,
    open_store,
    progress_bar,
    status,
    stdout_console,
    store_option,
    stored_run_id,
    tolerance,
    traffic_option,
)
from retrieval_pipeline.cli.errors import CommandError, warn
from retrieval_pipeline.cli.interruptions import Tally
from retrieval_pipeline.cli.report import markdown_option, write_markdown
from retrieval_pipeline.core.base.exit_codes import EXIT_FAILED, EXIT_INCOMPLETE

SHOW_CHOICES = ("auto", "all", "misses", "none")


@click.command("run")
@click.argument("set_identifier", metavar="SET", callback=identifiers("set identifier"))
@click.argument("retriever_identifier", metavar="RETRIEVER", callback=identifiers("retriever identifier"))
@config_option
@store_option
@click.option(
    "--max-top1-drop",
    type=float,
    callback=tolerance,
    help="Largest accepted top-1 hit-rate drop, 0..1 (0.1 = 10 pp). Default: the configuration's, else 0.1.",
)
@click.option(
    "--max-top3-drop",
    type=float,
    callback=tolerance,
    help="Largest accepted top-3 hit-rate drop, 0..1. Default: the configuration's, else 0.1.",
)
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 on a regression (for CI) instead of only warning.")
@click.option(
    "--fail-on-inconclusive",
    is_flag=True,
    help="Exit 1 on an inconclusive verdict (a drop beyond tolerance that tolerances.min_significance cannot "
    "tell from noise, or that tolerances.max_unjudged_share lays on unjudged documents) instead of only warning.",
)
@click.option(
    "--baseline",
    "baseline_run_id",
    metavar="RUN_ID",
    callback=stored_run_id,
    help="Compare with this stored complete run instead of the one `baseline_policy` picks (the latest, or "
    "the latest accepted): pin the baseline, e.g. when re-running a failed CI gate. See `retrieval-eval history`.",
)
@click.option(
    "--show",
    type=click.Choice(SHOW_CHOICES),
    default="auto",
    show_default=True,
    help="Per-question rows: auto = all for up to 50 questions, else misses; misses = top-3 misses and errors.",
)
@traffic_option
@markdown_option
@json_option
@labels_option
def run(
    set_identifier: str,
    retriever_identifier: str,
    config_path,
    store_uri: str | None,
    max_top1_drop: float | None,
    max_top3_drop: float | None,
    fail_on_regression: bool,
    fail_on_inconclusive: bool,
    baseline_run_id: str | None,
    show: str,
    traffic_log: str | None,
    markdown_path,
    as_json: bool,
    labels: str | None,
) -> None:
    """Run the question set SET against RETRIEVER, save the run and compare it with the previous one.

    Prints the per-question hits, the top-1 and top-3 hit rates, the breakdowns by form and by hard
    class, the saved run and the regression verdict; with a baseline also the per-group deltas, the
    questions that flipped, and paired exact McNemar p-values.
    """
    from retrieval_pipeline.core.services.evaluation.configured import configured_settings
    from retrieval_pipeline.core.services.views.evaluation_view import evaluation_view

    config = load_project(config_path)
    question_set = config.question_set(set_identifier)
    settings = configured_settings(
        config,
        question_set,
        traffic_log=traffic_log,
        max_top1_drop=max_top1_drop,
        max_top3_drop=max_top3_drop,
        baseline_run_id=baseline_run_id,
        labels=labels,
    )
    store = open_store(store_uri, config)
    store.check_writable()  # before the retriever is built: its index may take long, and its run longer
    evaluation = _evaluate(config, question_set, retriever_identifier, store, settings)
    view = evaluation_view(evaluation, settings, store.uri)
    if markdown_path is not None:
        write_markdown(markdown_path, view)
    if as_json:
        from retrieval_pipeline.cli.render.payloads import emit

        payload = view.to_dict(streamed=True)
        emit(payload if evaluation.generated is None else {**payload, "generated": _slice(evaluation.generated, question_set)})
    else:
        _print_report(view, evaluation.stored.run_id, store.uri, show)
        if evaluation.generated is not None:
            stdout_console().print(_slice_line(_slice(evaluation.generated, question_set)), highlight=False, markup=False)
    _settle(evaluation, fail_on_regression, fail_on_inconclusive)


def _evaluate(config, question_set, retriever_identifier: str, store, settings):
    """Anything a retriever prints goes to stderr: stdout holds the report, or exactly one JSON object."""
    from retrieval_pipeline.core.scoring.results import utc_now
    from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
    from retrieval_pipeline.core.storage.store import HistoryKey

    started, tally = utc_now(), Tally()
    pair = f"{question_set.identifier} × {retriever_identifier}"
    try:
        with redirect_stdout(sys.stderr):
            with status(f"Preparing retriever {retriever_identifier}…") as progress:
                retriever = config.retriever(retriever_identifier, progress=progress)
            tally.started = True
            with progress_bar(len(question_set.questions), pair) as advance:
                return evaluate_and_record(question_set, retriever, store, settings, progress=tally.counting(advance))
    except KeyboardInterrupt:
        key = HistoryKey(question_set.identifier, retriever_identifier)
        raise tally.run_stopped(store, key, started, len(question_set.questions)) from None


def _slice(generated, question_set) -> dict:
    """The generated questions' own run (core/services/generated/split.py), as `--json` gives it."""
    run = generated.run
    figures = {f"top{k}": run.hit_rate(k) for k in run.cutoffs}
    return {
        "set": run.set_identifier,
        "run_id": generated.stored.run_id,
        "question_count": run.question_count,
        "counted": question_set.generated_questions is not None,
        "hit_rates": figures,
        "metrics": run.metrics(),
        "verdict": generated.report.verdict.value,
        "summary": generated.report.summary,
    }


def _slice_line(generated: dict) -> str:
    from retrieval_pipeline.core.scoring.measures import figure_of

    counted = "counted in the verdict above too" if generated["counted"] else "not counted in the verdict above"
    shown = {**generated["hit_rates"], **generated["metrics"]}
    keys = ["top1", "top3", *(key for key in generated["metrics"] if key.startswith("ndcg@"))]
    figures = ", ".join(f"{figure_of(key).title} {figure_of(key).text(shown[key])}" for key in keys)
    return (
        f"Generated questions, {generated['set']} ({generated['question_count']} questions, {counted}): {figures}; "
        f"saved run {generated['run_id']}; its own verdict, which gates nothing: {generated['summary']}"
    )


def _settle(evaluation, fail_on_regression: bool, fail_on_inconclusive: bool) -> None:
    """The exit: incomplete runs fail; a regression or an inconclusive verdict fails when asked to, else warns."""
    run_result, report = evaluation.run, evaluation.report
    if not run_result.complete:
        from retrieval_pipeline.core.scoring.failures import failure_summary

        raise CommandError(
            f"incomplete run: {failure_summary(run_result)}; "
            f"stored as run {evaluation.stored.run_id} for inspection, never used as a baseline",
            EXIT_INCOMPLETE,
        )
    if report.is_regression:
        if fail_on_regression:
            raise CommandError(report.summary, EXIT_FAILED)
        warn(f"{report.summary} (pass --fail-on-regression to make this fail)")
    if report.is_inconclusive:
        if fail_on_inconclusive:
            raise CommandError(report.summary, EXIT_FAILED)
        warn(f"{report.summary} (pass --fail-on-inconclusive to make this fail)")


def _print_report(view, stored_run_id: str, store_uri: str, show: str) -> None:
    from retrieval_pipeline.cli.render import terminal as render

    run_result = view.run.result
    console = stdout_console()
    console.print(
        f"[bold]{run_result.set_identifier}[/bold] × [bold]{run_result.retriever_identifier}[/bold] "
        f"(grader {run_result.grader}, {run_result.question_count} questions, labels {run_result.labels}"
        f"{'' if run_result.query_mode == 'current' else f', turns asked as {run_result.query_mode}'})"
    )
    questions, note = render.selected_questions(run_result, show)
    if questions:
        render.print_questions(console, questions)
    if note:
        console.print(note)
    console.print()
    for line in render.rate_lines(view.run):
        console.print(line)
    console.print(render.metrics_line(view.run))
    latency = render.latency_line(view.run)
    if latency:
        console.print(latency)
    for line in render.traffic_lines(view.traffic):
        console.print(line)
    render.print_approximation(console, run_result)
    if view.run.conversations_text:
        console.print(f"Conversations: {view.run.conversations_text}")
    for breakdown in view.run.breakdowns:
        render.print_breakdown(console, breakdown)
    console.print()
    kind = "Saved run" if run_result.complete else "Saved incomplete run"
    console.print(f"{kind} {stored_run_id} to {store_uri}")
    render.print_regression(console, view)
