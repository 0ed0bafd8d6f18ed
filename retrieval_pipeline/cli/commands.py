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
    open_store,
    stdout_console,
    store_option,
)
from retrieval_pipeline.cli.errors import EXIT_FAILED, CommandError


@click.command("list")
@config_option
@json_option
def list_command(config_path, as_json: bool) -> None:
    """List the question sets (questions by form) and retrievers (kind, status) of the configuration.

    Everything listed is validated as `run` validates it (set files, retriever kinds and parameters,
    files they name), without building any index, so `list` is a quick check of a configuration. Each
    retriever's problem (a run file not written yet) is named on its own row, the others listed as ok;
    exit 2 when any has one."""
    from retrieval_pipeline.core.base.errors import RetrievalEvalError
    from retrieval_pipeline.core.base.secrets import scrub

    config = load_project(config_path)
    sets = config.question_sets
    rows = [
        {
            "identifier": identifier,
            "name": question_set.name,
            "question_count": len(question_set.questions),
            "by_form": question_set.counts_by_form(),
            "by_hard_class": question_set.counts_by_hard_class(),
            "source": sets.source_of(identifier),
        }
        for identifier, question_set in sets.items()
    ]
    retrievers = []
    for name, spec in config.retriever_specs.items():
        try:
            config.check_retriever(name)
            problem = None
        except RetrievalEvalError as error:
            problem = scrub(str(error))
        retrievers.append({"identifier": name, "kind": spec.kind, "status": "problem" if problem else "ok", "problem": problem})
    if as_json:
        from retrieval_pipeline.cli.payloads import emit

        emit({"config": config.source, "store": config.store_uri, "question_sets": rows, "retrievers": retrievers})
    else:
        _print_listing(config, rows, retrievers)
    problems = [retriever["problem"] for retriever in retrievers if retriever["problem"]]
    if problems:  # the listing shows every retriever; stderr names each problem, as `run` would
        many = f"{len(problems)} of {len(retrievers)} retrievers cannot be run: " if len(problems) > 1 else ""
        raise CommandError(many + "; ".join(problems))


def _print_listing(config, rows: list[dict], retrievers: list[dict]) -> None:
    from rich.markup import escape
    from rich.table import Table

    console = stdout_console()
    console.print(f"Configuration: {config.source}")
    console.print(f"Result store: {config.store_uri}")
    table = Table(title="Question sets", title_justify="left")
    identifier_column(table, "set")
    for header, justify in (("questions", "right"), ("match", "right"), ("gap", "right"), ("name", "left")):
        table.add_column(header, justify=justify)
    for row in rows:
        forms = row["by_form"]
        table.add_row(
            row["identifier"], str(row["question_count"]), str(forms.get("match", 0)), str(forms.get("gap", 0)), row["name"]
        )
    console.print(table if rows else "No question sets configured.")
    table = Table(title="Retrievers", title_justify="left")
    identifier_column(table, "retriever")
    table.add_column("kind")
    table.add_column("status")
    for retriever in retrievers:
        status = "ok" if retriever["problem"] is None else f"[red]problem:[/red] {escape(retriever['problem'])}"
        table.add_row(retriever["identifier"], retriever["kind"], status)
    console.print(table if retrievers else "No retrievers configured.")


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
    from retrieval_pipeline.core.services.baselines import BaselinePolicy
    from retrieval_pipeline.core.services.history import run_history
    from retrieval_pipeline.core.services.rescored_history import rescored_history
    from retrieval_pipeline.core.storage.store import HistoryKey

    # With --store the configuration is optional (but --rescore reads the set from it); when there is one,
    # its baseline policy marks the baseline.
    config = load_project(config_path) if rescore or not store_uri or (config_path and config_path.exists()) else None
    store = open_store(store_uri, config)
    key = HistoryKey(set_identifier, retriever_identifier)
    policy = config.baseline_policy if config else BaselinePolicy.PREVIOUS
    if rescore:
        entries = rescored_history(store, key, config.question_set(set_identifier), limit or None, policy)
    else:
        entries = run_history(store, key, limit or None, policy)
    if not entries:
        stored = ", ".join(f"{k.set_identifier} × {k.retriever_identifier}" for k in store.keys()) or "none"
        raise CommandError(
            f"no stored runs of set '{set_identifier}' against retriever '{retriever_identifier}' in {store.uri}; "
            f"stored: {stored}",
            EXIT_FAILED,
        )
    if as_json:
        from retrieval_pipeline.cli import payloads

        payloads.emit(
            {
                "set": set_identifier,
                "retriever": retriever_identifier,
                "grader": key.grader,
                "store": store.uri,
                "labels": "current" if rescore else "stored",
                "runs": payloads.history(entries),
            }
        )
        return
    from retrieval_pipeline.cli.fitted_tables import Column, print_fitted
    from retrieval_pipeline.core.base.formatting import signed_pp
    from retrieval_pipeline.core.scoring.measures import HIT_RATE, gated_figures

    console = stdout_console()
    questions = entries[0].summary.question_count
    console.print(f"{set_identifier} × {retriever_identifier} in {store.uri} ({questions} questions), newest first:")
    if rescore:
        console.print(f"Every run under the current labels of {set_identifier}, rescored from its stored ids.")
    rates = [figure for figure, _ in gated_figures((1, 3)) if figure.measure is HIT_RATE]
    columns = [Column("run at (UTC)", "left"), Column("run id", "left", identifier=True)]
    for order, figure in enumerate(rates):  # a narrow terminal leaves out top-3's columns, never top-1's
        columns += [Column(figure.short, optional=order), Column(f"Δ {figure.short}", optional=order)]
    columns.append(Column("status", "left"))
    rows = []
    for entry in entries:
        s = entry.summary
        notes = [entry.status] if s.complete else [_incomplete_note(s.errored_count)]
        if s.complete and s.verdict is None and entry.baseline_run_id is None:
            notes.append("first run")
        if s.question_count != questions:
            notes.append(f"{s.question_count} questions")
        if entry.rescored:
            notes.append(f"{len(entry.rescored)} relabelled rescored")
        if entry.not_rescored:
            notes.append(f"not rescored: {entry.not_rescored}")
        rows.append(
            [
                s.run_at.strftime("%Y-%m-%d %H:%M:%S"),
                s.run_id,
                *(cell for f in rates for cell in (f.text(s.figures[f.key]), signed_pp(entry.deltas.get(f.key)))),
                "; ".join(note for note in notes if note),
            ]
        )
    print_fitted(console, None, columns, rows, show_edge=False)


def _incomplete_note(errors: int) -> str:
    """A run without errors is incomplete only when an interrupted `nightly` saved it unrecorded by Dagster."""
    if errors == 0:
        return "incomplete: interrupted before Dagster recorded it"
    return f"incomplete: {errors} error{'s' if errors != 1 else ''}"


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
    leftovers = [store.shown(path) for path in plan.leftovers]
    if as_json:
        from retrieval_pipeline.cli import payloads

        payloads.emit(
            {
                "store": store.uri,
                "older_than_days": days,
                "dry_run": dry_run,
                "removed": payloads.stored_runs(plan.runs),
                "removed_leftovers": leftovers,
            }
        )
        return
    console = stdout_console()
    if not plan.runs and not leftovers:
        console.print(
            f"Nothing to remove from {store.uri}: no run older than {days:g} days "
            "(the latest readable run of each set and retriever is always kept)."
        )
        return
    from rich.table import Table

    verb = "Would remove" if dry_run else "Removed"
    console.print(f"{verb} {len(plan.runs)} run(s) older than {days:g} days from {store.uri}:")
    if plan.runs:
        table = Table()
        for header in ("set", "retriever", "run id", "run at (UTC)", "complete"):
            table.add_column(header, no_wrap=True)
        for run in plan.runs:
            table.add_row(
                run.key.set_identifier,
                run.key.retriever_identifier,
                run.run_id,
                run.run_at.strftime("%Y-%m-%d %H:%M:%S"),
                "yes" if run.complete else "no",
            )
        console.print(table)
    for path in leftovers:
        console.print(f"{verb} {path} (left by a save that crashed)")
    if dry_run:
        console.print("Dry run: nothing was removed.")
