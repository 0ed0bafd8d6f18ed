"""`verdicts`: every configured pair's latest stored verdict, as a table and an exit code.

A team that evaluates on its workers (the schedule, a backfill) still wants CI to fail on a bad night;
the verdicts each check saved with its run are in the result store, so CI reads them there, with no
Dagster instance to reach. Exit 1 when any pair's latest verdict failed (a regression, an incomplete
run, a latest run that cannot be read), as the leaderboard's `every_pair_passes` check fails, and when no
pair was evaluated at all (a mistyped store must not pass the gate) unless `--allow-empty` says that is
expected. A store that is a file is refused (exit 2), as `run` refuses it (`ResultStore.check_readable`).
"""

from __future__ import annotations

import click

from retrieval_pipeline.cli.common import (
    config_option,
    identifier_column,
    json_option,
    load_project,
    open_store,
    stdout_console,
    store_location,
    store_option,
)
from retrieval_pipeline.cli.errors import CommandError


@click.command("verdicts")
@config_option
@store_option
@json_option
@click.option("--allow-empty", is_flag=True, help="Pass when no pair has a stored run yet (a new store), instead of exit 1.")
def verdicts(config_path, store_uri: str | None, as_json: bool, allow_empty: bool) -> None:
    """Show the latest stored verdict of every configured set and retriever pair; exit 1 if any failed.

    The verdicts are the ones each regression check saved with its run (`run`, `nightly`, the schedule, a
    backfill on a team's workers), never recomputed. A pair with no stored run is listed as not evaluated;
    when no pair has one, the command fails unless --allow-empty. A pair whose latest run cannot be read
    fails."""
    from retrieval_pipeline.core.base.exit_codes import EXIT_FAILED
    from retrieval_pipeline.core.services.evaluation.pair_verdicts import latest_verdicts

    config = load_project(config_path)
    found = latest_verdicts(open_store(store_uri, config), list(config.question_sets), list(config.retriever_identifiers))
    empty = not found.evaluated and not allow_empty
    if as_json:
        from retrieval_pipeline.cli.render.payloads import emit

        emit({"passed": found.passed and not empty, "pairs": [vars(verdict) for verdict in found.verdicts]})
    else:
        _print(found)
    if not found.passed:
        raise CommandError(found.sentence, EXIT_FAILED)
    if empty:
        raise CommandError(
            f"no pair of the {len(found.verdicts)} configured has a stored run in {store_location(store_uri, config)}: "
            "nothing was evaluated there (is it the right store?); pass --allow-empty when none is expected yet",
            EXIT_FAILED,
        )


def _print(found) -> None:
    from rich.table import Table

    table = Table(title="Latest verdicts", title_justify="left")
    identifier_column(table, "set")
    identifier_column(table, "retriever")
    table.add_column("verdict")
    table.add_column("sentence")
    for verdict in found.verdicts:
        colour = "red" if verdict.failed else "yellow" if verdict.warned else "green"
        table.add_row(
            verdict.set_identifier, verdict.retriever_identifier, f"[{colour}]{verdict.status}[/{colour}]", verdict.sentence
        )
    stdout_console().print(table)
