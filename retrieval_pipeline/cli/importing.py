"""`retrieval-eval import beir DIR ...`: golden set files from formats IR people already have."""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_pipeline.cli.common import stdout_console
from retrieval_pipeline.cli.errors import CommandError

SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")  # those load_question_set_file reads


@click.group("import")
def import_group() -> None:
    """Write a golden set file from another format."""


@import_group.command("beir")
@click.argument("folder", metavar="DIR", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--split", default="test", show_default=True, help="The qrels split: qrels/<split>.tsv.")
@click.option("--identifier", required=True, help="The set identifier, e.g. acme.support (a-z, 0-9, _ and dots).")
@click.option("--name", help="The set's name. Default: '<folder> (<split>)'.")
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The set file to write; .yaml/.yml, .json or .jsonl (header line, then one question per line).",
)
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def beir(folder: Path, split: str, identifier: str, name: str | None, out: Path, force: bool) -> None:
    """Write a golden set from the BEIR folder DIR (corpus.jsonl, queries.jsonl, qrels/<split>.tsv).

    Every query with at least one judgement of score > 0 becomes a question expecting all its relevant
    documents; its form is tagged match or gap by the documented vocabulary-overlap rule
    (retrieval_pipeline.core.forms). The file is written atomically and loads back as the same set.
    """
    if out.suffix not in SUFFIXES:
        raise click.BadParameter(f"{out}: the file type follows the suffix; use one of {', '.join(SUFFIXES)}", param_hint="--out")
    from retrieval_pipeline.core.beir import import_beir
    from retrieval_pipeline.core.question_file_writer import write_question_set_file
    from retrieval_pipeline.core.questions import check_identifier

    try:
        check_identifier(identifier, "set identifier")
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--identifier") from None
    if out.exists() and not force:
        raise CommandError(f"{out} already exists; pass --force to overwrite it")
    question_set = import_beir(folder, identifier=identifier, split=split, name=name)
    written = write_question_set_file(question_set, out, overwrite=force)
    forms = ", ".join(f"{form} {count}" for form, count in question_set.counts_by_form().items())
    stdout_console().print(
        f"Wrote {len(question_set.questions)} questions ({forms}) of set {question_set.identifier} to {written}"
    )
