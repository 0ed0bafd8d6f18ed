"""`retrieval-eval accept SET RETRIEVER RUN_ID`: make a stored run the baseline under the `accepted` policy.

A person's decision that a new level is the one to hold the retriever to (a deliberate trade-off, a
corrected label set). The acceptance is its own record in the store; the run itself is never rewritten.
"""

from __future__ import annotations

import os

import click

from retrieval_pipeline.cli.common import (
    config_option,
    identifiers,
    json_option,
    load_project,
    open_store,
    stdout_console,
    store_option,
    stored_run_id,
)


@click.command("accept")
@click.argument("set_identifier", metavar="SET", callback=identifiers("set identifier"))
@click.argument("retriever_identifier", metavar="RETRIEVER", callback=identifiers("retriever identifier"))
@click.argument("run_id", metavar="RUN_ID", callback=stored_run_id)
@config_option
@store_option
@click.option("--by", "accepted_by", metavar="NAME", help="Who accepts, kept with the acceptance. Default: $USER.")
@json_option
def accept(
    set_identifier: str, retriever_identifier: str, run_id: str, config_path, store_uri, accepted_by, as_json: bool
) -> None:
    """Accept the stored complete run RUN_ID of SET against RETRIEVER as a baseline: under
    `baseline_policy: accepted` the next runs compare with it. Exit 1, nothing recorded, for an unknown
    or incomplete run (run ids from `retrieval-eval history`)."""
    from retrieval_pipeline.core.services.evaluation.baselines import accept_run
    from retrieval_pipeline.core.storage.store import HistoryKey

    store = open_store(store_uri, None if store_uri else load_project(config_path))
    key = HistoryKey(set_identifier, retriever_identifier)
    acceptance = accept_run(store, key, run_id, accepted_by or os.environ.get("USER") or None)
    if as_json:
        from retrieval_pipeline.cli.render.payloads import emit

        emit(
            {
                "set": set_identifier,
                "retriever": retriever_identifier,
                "grader": key.grader,
                "store": store.uri,
                "run_id": acceptance.run_id,
                "accepted_at": acceptance.accepted_at.isoformat(),
                "accepted_by": acceptance.accepted_by,
            }
        )
        return
    who = f" by {acceptance.accepted_by}" if acceptance.accepted_by else ""
    stdout_console().print(f"Accepted run {run_id} of {set_identifier} × {retriever_identifier}{who} in {store.uri}.")
