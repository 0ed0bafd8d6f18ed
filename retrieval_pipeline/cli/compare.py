"""`retrieval-eval compare SET RETRIEVER RETRIEVER...`: retrievers side by side with paired tests."""

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
    traffic_option,
)
from retrieval_pipeline.cli.errors import CommandError
from retrieval_pipeline.cli.interruptions import Tally
from retrieval_pipeline.core.base.exit_codes import EXIT_INCOMPLETE


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
@traffic_option
@json_option
@labels_option
def compare(
    set_identifier: str,
    retriever_identifiers: tuple[str, ...],
    config_path,
    store_uri: str | None,
    save: bool,
    limit: int,
    traffic_log: str | None,
    as_json: bool,
    labels: str | None,
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

    from retrieval_pipeline.core.services.evaluation.configured import configured_settings
    from retrieval_pipeline.core.services.library import compared

    config = load_project(config_path)
    question_set = config.question_set(set_identifier)
    for identifier in retriever_identifiers:
        if identifier not in config.retriever_specs:
            config.retriever(identifier)  # raises the unknown-retriever error listing the known ones
    settings = configured_settings(config, question_set, traffic_log=traffic_log, labels=labels)
    store = open_store(store_uri, config) if save else None
    if store is not None:
        store.check_writable()  # before any retriever is built or asked
    runs, tally = _evaluate_each(config, question_set, retriever_identifiers, store, settings)
    view = compared(runs, settings, tally.saved if store is not None else None)
    if as_json:
        from retrieval_pipeline.cli.render.payloads import emit

        emit(view.to_dict())
    else:
        _print(view, limit, store)
    incomplete = [run for run in runs if not run.complete]
    if incomplete:
        from retrieval_pipeline.core.scoring.failures import failure_summary

        causes = "; ".join(f"{run.retriever_identifier}: {failure_summary(run)}" for run in incomplete)
        raise CommandError(f"incomplete run: {causes}; errored questions are left out of the paired tests", EXIT_INCOMPLETE)


def _evaluate_each(config, question_set, identifiers: tuple[str, ...], store, settings):
    """Each retriever built and run in turn (saved too with a store); anything it prints stays off stdout."""
    from retrieval_pipeline.core.services.library import evaluated

    runs, tally = [], Tally()
    try:
        with redirect_stdout(sys.stderr):
            for identifier in identifiers:
                with status(f"Preparing retriever {identifier}…") as progress:
                    retriever = config.retriever(identifier, progress=progress)
                with progress_bar(len(question_set.questions), f"{question_set.identifier} × {identifier}") as advance:
                    evaluation = evaluated(question_set, retriever, store, settings, progress=advance)
                runs.append(evaluation.run)
                tally.finished.append(identifier)
                if evaluation.stored is not None:
                    tally.saved[identifier] = (evaluation.stored.run_id, evaluation.report.summary)
    except KeyboardInterrupt:
        raise tally.compare_stopped(identifiers, store is not None) from None
    return runs, tally


def _print(view, limit: int, store) -> None:
    from retrieval_pipeline.cli.render.compare import print_comparison

    console = stdout_console()
    print_comparison(console, view, limit)
    for identifier, (run_id, verdict) in (view.saved or {}).items():
        console.print(f"Saved run {run_id} of {identifier} to {store.uri}. {verdict}")
