"""`retrieval-eval pool SET [RETRIEVER ...] --depth K --out FILE`: the unjudged documents to judge next."""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_pipeline.cli.common import (
    config_option,
    load_project,
    open_store,
    refuse_output_over_input,
    stdout_console,
    store_option,
)


@click.command("pool")
@click.argument("set_identifier", metavar="SET")
@click.argument("retriever_identifiers", metavar="[RETRIEVER ...]", nargs=-1)
@config_option
@store_option
@click.option("--depth", type=click.IntRange(min=1), default=10, show_default=True, help="Pool each run's top K documents.")
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The judging file to write: .csv (any spreadsheet opens it) or .jsonl.",
)
def pool(set_identifier: str, retriever_identifiers: tuple[str, ...], config_path, store_uri, depth: int, out_path: Path) -> None:
    """Write a judging file of SET's unjudged documents: for each question, every document in the top K
    of the latest stored runs of the RETRIEVERs (default: every retriever with a run) that is neither
    expected nor rejected today, once, with who ranked it where, the question, its labels, and the
    document's title and text when a retriever knows its corpus. Fill `judgement` with yes or no (or run
    `retrieval-eval judge FILE`), then merge with `retrieval-eval judge apply FILE SET_FILE`."""
    from retrieval_pipeline.core.services.labels.judging_files import candidate_rows, write_judging_file
    from retrieval_pipeline.core.services.labels.pooling import pool_latest

    config = load_project(config_path)
    config.question_set(set_identifier)  # an unknown set is named first, as before
    inputs = {
        "set file": Path(config.question_sets.source_of(set_identifier)),
        "set's corpus": config.set_corpus(set_identifier),
        "configuration": config.path,
    }
    refuse_output_over_input(out_path, inputs)  # a judging file written over them would replace them
    candidates, runs = pool_latest(config, open_store(store_uri, config), set_identifier, retriever_identifiers, depth)
    write_judging_file(candidate_rows(candidates), out_path)
    console = stdout_console()
    questions = len({candidate.question_id for candidate in candidates})
    console.print(
        f"Pooled {len(candidates)} unjudged document(s) for {questions} question(s) from the top {depth} of the latest runs of "
        f"{', '.join(run.retriever_identifier for run in runs)} into {out_path}"
    )
    for run in runs:
        if run.cutoffs[-1] < depth:
            console.print(
                f"Note: run {run.run_id} of {run.retriever_identifier} keeps its top {run.cutoffs[-1]} only (its deepest cut-off)."
            )
