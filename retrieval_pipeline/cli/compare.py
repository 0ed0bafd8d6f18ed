"""`retrieval-eval compare SET RETRIEVER RETRIEVER...`: retrievers side by side with paired tests."""

from __future__ import annotations

import sys
from contextlib import redirect_stdout

import click

from retrieval_pipeline.cli.common import (
    config_option,
    identifiers,
    json_option,
    load_project,
    open_store,
    progress_bar,
    status,
    stdout_console,
    store_option,
)
from retrieval_pipeline.cli.errors import EXIT_INCOMPLETE, EXIT_INTERRUPTED, INTERRUPTED, CommandError


@click.command("compare")
@click.argument("set_identifier", metavar="SET", callback=identifiers("set identifier"))
@click.argument(
    "retriever_identifiers",
    metavar="RETRIEVER RETRIEVER...",
    nargs=-1,
    required=True,
    callback=identifiers("retriever identifier"),
)
@config_option
@store_option
@click.option(
    "--save",
    is_flag=True,
    help="Also save each run in the history (with its regression check), as `run` does. Default: not saved.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="Disagreeing questions to list (0 lists all; --json always has all).",
)
@json_option
def compare(
    set_identifier: str,
    retriever_identifiers: tuple[str, ...],
    config_path,
    store_uri: str | None,
    save: bool,
    limit: int,
    as_json: bool,
) -> None:
    """Evaluate each RETRIEVER on SET and show them side by side: overall, by form, by hard class,
    the questions on which they disagree, and an exact McNemar p-value of each retriever against the
    first at top-1 and top-3 (a small p-value: the difference is unlikely to be noise).

    The runs are fresh and, unless --save is given, not stored.
    """
    if len(retriever_identifiers) < 2:
        raise click.UsageError("compare needs at least two retrievers")
    repeated = next((r for r in retriever_identifiers if retriever_identifiers.count(r) > 1), None)
    if repeated:
        raise click.UsageError(f"retriever '{repeated}' is given more than once")

    from retrieval_pipeline.core.scoring.comparison import compare_runs
    from retrieval_pipeline.core.scoring.intervals import DEFAULT_SIGNIFICANCE
    from retrieval_pipeline.core.services.evaluation import evaluate_and_record
    from retrieval_pipeline.core.services.runner import run_question_set
    from retrieval_pipeline.core.services.settings import EvaluationSettings

    config = load_project(config_path)
    settings = EvaluationSettings.from_config(config)
    store = open_store(store_uri, config) if save else None
    question_set = config.question_set(set_identifier)
    for identifier in retriever_identifiers:
        if identifier not in config.retriever_specs:
            config.retriever(identifier)  # raises the unknown-retriever error listing the known ones
    if store is not None:
        store.check_writable()  # before any retriever is built or asked
    runs, saved = [], {}
    try:
        with redirect_stdout(sys.stderr):  # anything a retriever prints stays off stdout
            for identifier in retriever_identifiers:
                with status(f"Preparing retriever {identifier}…") as progress:
                    retriever = config.retriever(identifier, progress=progress)
                with progress_bar(len(question_set.questions), f"{set_identifier} × {identifier}") as advance:
                    if store is not None:
                        evaluation = evaluate_and_record(question_set, retriever, store, settings, progress=advance)
                        runs.append(evaluation.run)
                        saved[identifier] = (evaluation.stored.run_id, evaluation.report.summary)
                    else:
                        runs.append(
                            run_question_set(
                                question_set, retriever, cutoffs=settings.cutoffs, retry=settings.retry, progress=advance
                            )
                        )
    except KeyboardInterrupt:
        done = ", ".join(f"{identifier} (run {run_id})" for identifier, (run_id, _) in saved.items()) or "none"
        unfinished = ", ".join(retriever_identifiers[len(runs) :])
        saved_note = f"; saved whole: {done}" if store is not None else "; nothing is saved without --save"
        raise CommandError(
            f"{INTERRUPTED}: {len(runs)} of {len(retriever_identifiers)} retrievers evaluated, not {unfinished}{saved_note}",
            EXIT_INTERRUPTED,
        ) from None
    comparison = compare_runs(
        runs,
        min_compared_questions=settings.tolerances.min_compared_questions,
        significance=settings.tolerances.min_significance or DEFAULT_SIGNIFICANCE,
    )

    from retrieval_pipeline.core.services.views.comparison_view import comparison_view

    view = comparison_view(comparison)
    if as_json:
        from retrieval_pipeline.cli import payloads, payloads_compare

        payloads.emit(payloads_compare.comparison(view, saved if store is not None else None))
    else:
        from retrieval_pipeline.cli.render_compare import print_comparison

        print_comparison(stdout_console(), view, limit)
        if store is not None:
            console = stdout_console()
            for identifier, (run_id, verdict) in saved.items():
                console.print(f"Saved run {run_id} of {identifier} to {store.uri}. {verdict}")

    incomplete = [run for run in runs if not run.complete]
    if incomplete:
        from retrieval_pipeline.core.scoring.failures import failure_summary

        causes = "; ".join(f"{run.retriever_identifier}: {failure_summary(run)}" for run in incomplete)
        raise CommandError(f"incomplete run: {causes}; errored questions are left out of the paired tests", EXIT_INCOMPLETE)
