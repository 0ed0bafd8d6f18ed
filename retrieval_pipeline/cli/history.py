"""`retrieval-eval history SET RETRIEVER`: the stored runs of a pair, newest first, as a table or JSON."""

from __future__ import annotations

import click

from retrieval_pipeline.cli.common import (
    config_option,
    identifiers,
    json_option,
    load_project,
    no_stored_runs,
    open_store,
    stdout_console,
    store_option,
)


@click.command("history")
@click.argument("set_identifier", metavar="SET", callback=identifiers("set identifier"))
@click.argument("retriever_identifier", metavar="RETRIEVER", callback=identifiers("retriever identifier"))
@config_option
@store_option
@click.option("--limit", type=click.IntRange(min=0), default=20, show_default=True, help="Runs to show (0 for all).")
@click.option(
    "--rescore",
    is_flag=True,
    help="Show every run under SET's current labels (from the configuration), rescored from its stored ids; "
    "nothing stored is rewritten.",
)
@json_option
def history(
    set_identifier: str, retriever_identifier: str, config_path, store_uri, limit: int, rescore: bool, as_json: bool
) -> None:
    """The stored runs of SET against RETRIEVER, newest first, with their rates, their deltas to the
    baseline each was checked against, and a status: the check's verdict (baseline, pass, regression,
    not comparable, incomplete), who accepted it, and which run is the current baseline."""
    view = _history_view(set_identifier, retriever_identifier, config_path, store_uri, limit, rescore)
    if as_json:
        from retrieval_pipeline.cli.render.payloads import emit

        emit(view.to_dict())
    else:
        _print_history(view)


def _history_view(set_identifier: str, retriever_identifier: str, config_path, store_uri, limit: int, rescore: bool):
    """With --store the configuration is optional (but --rescore reads the set from it); when there is one,
    its baseline policy marks the baseline."""
    from retrieval_pipeline.core.services.evaluation.baselines import BaselinePolicy
    from retrieval_pipeline.core.services.evaluation.history import run_history
    from retrieval_pipeline.core.services.evaluation.rescored_history import rescored_history
    from retrieval_pipeline.core.services.views.history_view import HistoryView
    from retrieval_pipeline.core.storage.store import HistoryKey

    config = load_project(config_path) if rescore or not store_uri or (config_path and config_path.exists()) else None
    store = open_store(store_uri, config)
    key = HistoryKey(set_identifier, retriever_identifier)
    policy = config.baseline_policy if config else BaselinePolicy.PREVIOUS
    if rescore:
        entries = rescored_history(store, key, config.question_set(set_identifier), limit or None, policy)
    else:
        entries = run_history(store, key, limit or None, policy)
    if not entries:
        raise no_stored_runs(store, key)
    return HistoryView(key, store.uri, tuple(entries), rescore)


def _print_history(view) -> None:
    from retrieval_pipeline.cli.render.fitted_tables import Column, print_fitted

    console = stdout_console()
    key = view.key
    console.print(
        f"{key.set_identifier} × {key.retriever_identifier} in {view.store_uri} ({view.question_count} questions), newest first:"
    )
    if view.rescored:
        console.print(f"Every run under the current labels of {key.set_identifier}, rescored from its stored ids.")
    columns = [Column("run at (UTC)", "left"), Column("run id", "left", identifier=True)]
    for order, figure in enumerate(view.rates):  # a narrow terminal leaves out the later rates' columns, never the first's
        columns += [Column(figure.short, optional=order), Column(f"Δ {figure.short}", optional=order)]
        if view.weighted:  # beside the plain rate, and left out before it
            columns.append(Column(f"weighted {figure.short}", optional=order + 1))
    columns.append(Column("status", "left"))
    rows = [
        [
            entry.summary.run_at.strftime("%Y-%m-%d %H:%M:%S"),
            entry.summary.run_id,
            *(cell for f in view.rates for cell in _rate_cells(view, entry, f)),
            view.notes(entry),
        ]
        for entry in view.entries
    ]
    print_fitted(console, None, columns, rows, show_edge=False)
    for line in filter(None, map(view.rescored_baseline_line, view.entries)):
        console.print(line, markup=False)
    for line in filter(None, map(view.left_out_line, view.entries)):
        console.print(line, markup=False)


def _rate_cells(view, entry, figure) -> tuple[str, ...]:
    plain = (figure.text(entry.summary.figures[figure.key]), view.delta_text(entry, figure))
    return (*plain, view.weighted_text(entry, figure)) if view.weighted else plain
