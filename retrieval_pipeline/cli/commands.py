"""`list`, `history` and `prune`: what is configured and what is stored."""

from __future__ import annotations

from datetime import timedelta

import click

from retrieval_pipeline.cli.common import (
    config_option,
    identifier_column,
    identifiers,
    json_option,
    load_project,
    no_stored_runs,
    open_store,
    stdout_console,
    store_option,
)
from retrieval_pipeline.cli.errors import CommandError


@click.command("list")
@config_option
@json_option
def list_command(config_path, as_json: bool) -> None:
    """List the question sets (questions by form) and retrievers (kind, status) of the configuration.

    Everything listed is validated as `run` validates it (set files, retriever kinds and parameters,
    files they name), without building any index, so `list` is a quick check of a configuration. Each
    retriever's problem (a run file not written yet) is named on its own row, the others listed as ok;
    exit 2 when any has one."""
    from retrieval_pipeline.core.services.views.listing_view import listing_view

    view = listing_view(load_project(config_path))
    if as_json:
        from retrieval_pipeline.cli.payloads import emit

        emit(view.to_dict())
    else:
        _print_listing(view)
    if view.problems:  # the listing shows every retriever; stderr names each problem, as `run` would
        problems = view.problems
        many = f"{len(problems)} of {len(view.retrievers)} retrievers cannot be run: " if len(problems) > 1 else ""
        raise CommandError(many + "; ".join(problems))


def _print_listing(view) -> None:
    from rich.markup import escape
    from rich.table import Table

    from retrieval_pipeline.core.golden.beir import left_out_note

    console = stdout_console()
    console.print(f"Configuration: {view.config_source}")
    console.print(f"Result store: {view.store_uri}")
    table = Table(title="Question sets", title_justify="left")
    identifier_column(table, "set")
    for header, justify in (("questions", "right"), ("match", "right"), ("gap", "right"), ("name", "left")):
        table.add_column(header, justify=justify)
    for listed in view.question_sets:
        forms = listed.by_form
        table.add_row(
            listed.identifier, str(listed.question_count), str(forms.get("match", 0)), str(forms.get("gap", 0)), listed.name
        )
    console.print(table if view.question_sets else "No question sets configured.")
    for listed in view.question_sets:
        if listed.left_out:
            console.print(f"{escape(listed.identifier)}: {escape(left_out_note(listed.left_out))}")
    table = Table(title="Retrievers", title_justify="left")
    identifier_column(table, "retriever")
    table.add_column("kind")
    table.add_column("status")
    for retriever in view.retrievers:
        status = "ok" if retriever.problem is None else f"[red]problem:[/red] {escape(retriever.problem)}"
        table.add_row(retriever.identifier, retriever.kind, status)
    console.print(table if view.retrievers else "No retrievers configured.")
    _print_judges_and_logs(console, view)


def _print_judges_and_logs(console, view) -> None:
    """Only when configured: a configuration without judges or logs lists as it always did."""
    if view.judges:
        rows = [(judge.identifier, judge.kind, judge.model or "—", judge.host or "—") for judge in view.judges]
        _print_listed(console, "Judges", ("judge", "kind", "model", "endpoint host"), rows)
    if view.query_logs:
        rows = [(log.identifier, log.path, log.format or "unknown", "on" if log.examples else "off") for log in view.query_logs]
        _print_listed(console, "Query logs", ("log", "path", "format", "examples"), rows)


def _print_listed(console, title: str, headers: tuple[str, ...], rows) -> None:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    identifier_column(table, headers[0])
    for header in headers[1:]:
        table.add_column(header)
    for row in rows:
        table.add_row(*row)
    console.print(table)


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
        from retrieval_pipeline.cli.payloads import emit

        emit(view.to_dict())
    else:
        _print_history(view)


def _history_view(set_identifier: str, retriever_identifier: str, config_path, store_uri, limit: int, rescore: bool):
    """With --store the configuration is optional (but --rescore reads the set from it); when there is one,
    its baseline policy marks the baseline."""
    from retrieval_pipeline.core.services.baselines import BaselinePolicy
    from retrieval_pipeline.core.services.history import run_history
    from retrieval_pipeline.core.services.rescored_history import rescored_history
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
    from retrieval_pipeline.cli.fitted_tables import Column, print_fitted

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
    for line in filter(None, map(view.left_out_line, view.entries)):
        console.print(line, markup=False)


def _rate_cells(view, entry, figure) -> tuple[str, ...]:
    from retrieval_pipeline.core.base.formatting import signed_pp

    plain = (figure.text(entry.summary.figures[figure.key]), signed_pp(entry.deltas.get(figure.key)))
    return (*plain, view.weighted_text(entry, figure)) if view.weighted else plain


@click.command("prune")
@click.option(
    "--older-than-days",
    type=float,
    help="Remove runs older than this many days (0 to 36500). Default: the configuration's retention_days (30).",
)
@click.option("--dry-run", is_flag=True, help="List what would be removed; remove nothing.")
@config_option
@store_option
@json_option
def prune(older_than_days: float | None, dry_run: bool, config_path, store_uri, as_json: bool) -> None:
    """Apply retention: remove stored runs older than the retention period. The latest readable run, the
    latest readable complete run and the latest accepted run of every set and retriever are always kept,
    so a baseline survives under either policy; files that cannot be read are reported and left alone.
    Everything is checked before anything goes."""
    from retrieval_pipeline.core.base.errors import InvalidInputError
    from retrieval_pipeline.core.services.baselines import latest_accepted_run_id
    from retrieval_pipeline.core.services.views.history_view import PruneView
    from retrieval_pipeline.core.storage.retention import check_retention_days
    from retrieval_pipeline.core.storage.retention import prune as prune_store

    if older_than_days is not None:
        try:
            check_retention_days(older_than_days)
        except InvalidInputError as error:
            raise CommandError(f"--older-than-days {error}") from None
    config = load_project(config_path) if older_than_days is None or not store_uri else None
    days = older_than_days if older_than_days is not None else config.retention_days
    store = open_store(store_uri, config)
    plan = prune_store(store, timedelta(days=days), dry_run=dry_run, protected=lambda key: latest_accepted_run_id(store, key))
    view = PruneView(store.uri, days, dry_run, plan.runs, tuple(store.shown(path) for path in plan.leftovers))
    if as_json:
        from retrieval_pipeline.cli.payloads import emit

        emit(view.to_dict())
    else:
        _print_pruned(view)


def _print_pruned(view) -> None:
    console = stdout_console()
    if not view.runs and not view.leftovers:
        console.print(
            f"Nothing to remove from {view.store_uri}: no run older than {view.older_than_days:g} days "
            "(the latest readable run of each set and retriever is always kept)."
        )
        return
    from rich.table import Table

    console.print(f"{view.verb} {len(view.runs)} run(s) older than {view.older_than_days:g} days from {view.store_uri}:")
    if view.runs:
        table = Table()
        for header in ("set", "retriever", "run id", "run at (UTC)", "complete"):
            table.add_column(header, no_wrap=True)
        for run in view.runs:
            table.add_row(
                run.key.set_identifier,
                run.key.retriever_identifier,
                run.run_id,
                run.run_at.strftime("%Y-%m-%d %H:%M:%S"),
                "yes" if run.complete else "no",
            )
        console.print(table)
    for path in view.leftovers:
        console.print(f"{view.verb} {path} (left by a save that crashed)")
    if view.dry_run:
        console.print("Dry run: nothing was removed.")
