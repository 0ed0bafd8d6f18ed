"""`list` and `prune`: what is configured, and stored runs past their retention (`history` is history.py)."""

from __future__ import annotations

from datetime import timedelta

import click

from retrieval_pipeline.cli.common import (
    config_option,
    config_origin,
    identifier_column,
    json_option,
    load_project,
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

    config = load_project(config_path, announce=as_json)  # the listing names it on stdout
    view = listing_view(config)
    if as_json:
        from retrieval_pipeline.cli.render.payloads import emit

        emit(view.to_dict())
    else:
        _print_listing(view, config_origin(config_path, config))
    if view.problems:  # the listing shows every retriever; stderr names each problem, as `run` would
        problems = view.problems
        many = f"{len(problems)} of {len(view.retrievers)} retrievers cannot be run: " if len(problems) > 1 else ""
        raise CommandError(many + "; ".join(problems))


def _print_listing(view, origin: str | None) -> None:
    from rich.markup import escape
    from rich.table import Table

    from retrieval_pipeline.core.golden.beir import left_out_note

    console = stdout_console()
    console.print(f"Configuration: {view.config_source}" + (f" ({origin})" if origin else ""))
    console.print(f"Result store: {view.store_uri}")
    table = Table(title="Question sets", title_justify="left")
    identifier_column(table, "set")
    conversational = any(listed.conversations for listed in view.question_sets)
    headers = ("questions", "match", "gap", *(("conversations",) if conversational else ()))
    for header in headers:
        table.add_column(header, justify="right")
    table.add_column("name")
    for listed in view.question_sets:
        forms = listed.by_form
        counts = [listed.question_count, forms.get("match", 0), forms.get("gap", 0)]
        counts += [listed.conversations or 0] if conversational else []
        table.add_row(listed.identifier, *map(str, counts), listed.name)
    console.print(table if view.question_sets else "No question sets configured.")
    for listed in view.question_sets:
        if listed.left_out:
            console.print(f"{escape(listed.identifier)}: {escape(left_out_note(listed.left_out))}")
    table = Table(title="Retrievers", title_justify="left")
    identifier_column(table, "retriever")
    table.add_column("kind")
    asked = any(retriever.query_mode != "current" for retriever in view.retrievers)
    if asked:  # only once a retriever asks turns otherwise than as typed (query_modes.py)
        table.add_column("turns asked as")
    table.add_column("status")
    for retriever in view.retrievers:
        status = "ok" if retriever.problem is None else f"[red]problem:[/red] {escape(retriever.problem)}"
        table.add_row(retriever.identifier, retriever.kind, *([retriever.query_mode] if asked else []), status)
    console.print(table if view.retrievers else "No retrievers configured.")
    _print_judges_and_logs(console, view)


def _print_judges_and_logs(console, view) -> None:
    """Only when configured: a configuration without judges, logs or rewriters lists as it always did."""
    if view.judges:
        rows = [(judge.identifier, judge.kind, judge.model or "—", judge.host or "—") for judge in view.judges]
        _print_listed(console, "Judges", ("judge", "kind", "model", "endpoint host"), rows)
    if view.query_logs:
        rows = [(log.identifier, log.path, log.format or "unknown", "on" if log.examples else "off") for log in view.query_logs]
        _print_listed(console, "Query logs", ("log", "path", "format", "examples"), rows)
    if view.rewriters:
        rows = [(rewriter.identifier, rewriter.kind, rewriter.model or "—", rewriter.host or "—") for rewriter in view.rewriters]
        _print_listed(console, "Rewriters", ("rewriter", "kind", "model", "endpoint host"), rows)


def _print_listed(console, title: str, headers: tuple[str, ...], rows) -> None:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    identifier_column(table, headers[0])
    for header in headers[1:]:
        table.add_column(header)
    for row in rows:
        table.add_row(*row)
    console.print(table)


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
    from retrieval_pipeline.core.services.evaluation.baselines import latest_accepted_run_id
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
        from retrieval_pipeline.cli.render.payloads import emit

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
