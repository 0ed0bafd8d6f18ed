"""`retrieval-eval import beir|trec ...`: golden set files from formats IR people already have."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from retrieval_pipeline.cli.common import identifiers, stdout_console
from retrieval_pipeline.cli.errors import CommandError

if TYPE_CHECKING:
    from retrieval_pipeline.core.golden.questions import GoldenQuestionSet

SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")  # those load_question_set_file reads


@click.group("import")
def import_group() -> None:
    """Write a golden set file from another format."""


def _set_file_options(default_name: str) -> Callable:
    """The options every importer shares: the set's identifier and name, the file to write, --force."""

    def decorate(command: Callable) -> Callable:
        for option in reversed(
            [
                click.option(
                    "--identifier",
                    required=True,
                    callback=identifiers("set identifier"),
                    help="The set identifier, e.g. acme.support (a-z, 0-9, _ and dots).",
                ),
                click.option("--name", help=f"The set's name. Default: {default_name}."),
                click.option(
                    "--out",
                    "out",
                    required=True,
                    type=click.Path(dir_okay=False, path_type=Path),
                    help="The set file to write; .yaml/.yml, .json or .jsonl (header line, then one question per line).",
                ),
                click.option("--force", is_flag=True, help="Overwrite an existing file."),
            ]
        ):
            command = option(command)
        return command

    return decorate


def _import_to_file(load: Callable[[], GoldenQuestionSet], identifier: str, out: Path, force: bool) -> None:
    """Check the arguments before reading anything, then import, write atomically and report.

    `load` runs only once the identifier and the output file are known to be usable, so a bad
    argument never costs a read of a large collection, and an import error writes nothing.
    """
    if out.suffix not in SUFFIXES:
        raise click.BadParameter(f"{out}: the file type follows the suffix; use one of {', '.join(SUFFIXES)}", param_hint="--out")
    from retrieval_pipeline.core.golden.question_file_writer import write_question_set_file
    from retrieval_pipeline.core.golden.questions import check_identifier

    try:
        check_identifier(identifier, "set identifier")
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--identifier") from None
    if out.exists() and not force:
        raise CommandError(f"{out} already exists; pass --force to overwrite it")
    question_set = load()
    written = write_question_set_file(question_set, out, overwrite=force)
    forms = ", ".join(f"{form} {count}" for form, count in question_set.counts_by_form().items())
    stdout_console().print(
        f"Wrote {len(question_set.questions)} questions ({forms}) of set {question_set.identifier} to {written}"
    )


@import_group.command("beir")
@click.argument("folder", metavar="DIR", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--split", default="test", show_default=True, help="The qrels split: qrels/<split>.tsv.")
@_set_file_options("'<folder> (<split>)'")
def beir(folder: Path, split: str, identifier: str, name: str | None, out: Path, force: bool) -> None:
    """Write a golden set from the BEIR folder DIR (corpus.jsonl, queries.jsonl, qrels/<split>.tsv).

    Every query with at least one judgement of score > 0 becomes a question expecting all its relevant
    documents; its form is tagged match or gap by the documented vocabulary-overlap rule
    (retrieval_pipeline.core.golden.forms). The file is written atomically and loads back as the same set.
    """

    def load():
        from retrieval_pipeline.core.golden.beir import import_beir

        return import_beir(folder, identifier=identifier, split=split, name=name)

    _import_to_file(load, identifier, out, force)


_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@import_group.command("trec")
@click.option("--qrels", "qrels", required=True, type=_FILE, help="TREC qrels: 'qid iteration docid relevance' lines.")
@click.option(
    "--topics",
    "topics",
    required=True,
    type=_FILE,
    help="TREC topics: classic <top> ... </top> SGML, Web-track XML (<topic number=...>), or 'qid<TAB>text' lines.",
)
@click.option(
    "--corpus",
    "corpus",
    required=True,
    type=_FILE,
    help="The judged documents as a BEIR-style corpus.jsonl (_id, title, text), to tag the forms.",
)
@click.option(
    "--field",
    type=click.Choice(["title", "description"]),
    default="title",
    show_default=True,
    help="The topic field used as the question text (XML's <query> is the title; not used for tab-separated topics).",
)
@_set_file_options("the topics file's name")
def trec(qrels: Path, topics: Path, corpus: Path, field: str, identifier: str, name: str | None, out: Path, force: bool) -> None:
    """Write a golden set from TREC qrels and topics, with the documents from a corpus.jsonl.

    Every topic with at least one judgement of relevance > 0 becomes a question expecting all its
    relevant documents; unjudged topics are skipped. Forms are tagged match or gap by the documented
    vocabulary-overlap rule (retrieval_pipeline.core.golden.forms). The file is written atomically and loads
    back as the same set.
    """

    def load():
        from retrieval_pipeline.core.golden.trec import import_trec

        return import_trec(qrels, topics, identifier=identifier, name=name, field=field, corpus=corpus)

    _import_to_file(load, identifier, out, force)
