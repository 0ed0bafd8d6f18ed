"""`retrieval-eval import beir|trec|cast|ikat|qrecc|topiocqa ...`: golden set files from formats IR people
already have."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from retrieval_pipeline.cli.common import identifiers, json_option, refuse_output_over_input, stdout_console
from retrieval_pipeline.cli.errors import CommandError, warn

if TYPE_CHECKING:
    from retrieval_pipeline.core.golden.beir import ImportedSet

SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")  # those load_question_set_file reads


@click.group("import")
def import_group() -> None:
    """Write a golden set file from another format."""


def _set_file_options(default_name: str) -> Callable:
    """The options every importer shares: the set's identifier and name, the file to write, --force, the
    relevance grade judgements count from, --json."""

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
                click.option(
                    "--min-relevance",
                    type=float,
                    help="The lowest relevance grade that counts as relevant (as trec_eval's -l); lower grades are "
                    "judged not relevant. Default: any grade above 0.",
                ),
                json_option,
            ]
        ):
            command = option(command)
        return command

    return decorate


def _import_to_file(
    load: Callable[..., ImportedSet],
    inputs: Mapping[str, Path],
    *,
    identifier: str,
    name: str | None,
    out: Path,
    force: bool,
    min_relevance: float | None,
    as_json: bool,
) -> None:
    """Check the arguments before reading anything, then import, write atomically and report, naming the
    judged queries left out (judged only not relevant) so a set smaller than its qrels says why.

    `load(identifier=, name=, min_relevance=)` runs only once the identifier and the output file are known
    to be usable (none of the `inputs` it reads), so a bad argument never costs a read of a large
    collection, and an import error writes nothing.
    """
    if out.suffix not in SUFFIXES:
        raise click.BadParameter(f"{out}: the file type follows the suffix; use one of {', '.join(SUFFIXES)}", param_hint="--out")
    from retrieval_pipeline.core.golden.beir import left_out_note
    from retrieval_pipeline.core.golden.question_file_writer import write_question_set_file
    from retrieval_pipeline.core.golden.questions import check_identifier

    try:
        check_identifier(identifier, "set identifier")
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--identifier") from None
    refuse_output_over_input(out, inputs)
    if out.exists() and not force:
        raise CommandError(f"{out} already exists; pass --force to overwrite it")
    imported = load(identifier=identifier, name=name, min_relevance=min_relevance)
    question_set, left_out = imported.question_set, imported.left_out
    written = write_question_set_file(question_set, out, overwrite=force)
    if left_out:
        warn(left_out_note(left_out, imported.left_out_because))
    if as_json:
        from retrieval_pipeline.cli.render.payloads import emit

        emit(
            {
                "set": question_set.identifier,
                "file": str(written),
                "questions": len(question_set.questions),
                "conversations": len(question_set.conversations),
                "forms": question_set.counts_by_form(),
                "left_out": list(left_out),
            }
        )
        return
    forms = ", ".join(f"{form} {count}" for form, count in question_set.counts_by_form().items())
    conversations = len(question_set.conversations)
    held = f" in {conversations} conversation{'s' if conversations != 1 else ''}" if conversations else ""
    stdout_console().print(
        f"Wrote {len(question_set.questions)} questions ({forms}){held} of set {question_set.identifier} to {written}"
    )


@import_group.command("beir")
@click.argument("folder", metavar="DIR", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--split", default="test", show_default=True, help="The qrels split: qrels/<split>.tsv.")
@_set_file_options("'<folder> (<split>)'")
def beir(folder: Path, split: str, **options) -> None:
    """Write a golden set from the BEIR folder DIR (corpus.jsonl, queries.jsonl, qrels/<split>.tsv).

    Every query with at least one relevant judgement (score > 0, or at least --min-relevance) becomes a
    question expecting all its relevant documents, the others it was judged on as rejected ids; queries
    judged only not relevant are left out and named on stderr. Its form is tagged match or gap by the
    documented vocabulary-overlap rule (retrieval_pipeline.core.golden.forms). The file is written atomically and loads back as the same set.
    """

    def load(**labels):
        from retrieval_pipeline.core.golden.beir import imported_beir

        return imported_beir(folder, split=split, **labels)

    files = {
        "corpus": folder / "corpus.jsonl",
        "queries file": folder / "queries.jsonl",
        "qrels file": folder / "qrels" / f"{split}.tsv",
    }
    _import_to_file(load, files, **options)


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
def trec(qrels: Path, topics: Path, corpus: Path, field: str, **options) -> None:
    """Write a golden set from TREC qrels and topics, with the documents from a corpus.jsonl.

    Every topic with at least one relevant judgement (relevance > 0, or at least --min-relevance) becomes
    a question expecting all its relevant documents; unjudged topics are skipped, and topics judged only
    not relevant are left out and named on stderr. Forms are tagged match or gap by the documented
    vocabulary-overlap rule (retrieval_pipeline.core.golden.forms). The file is written atomically and loads
    back as the same set.
    """

    def load(**labels):
        from retrieval_pipeline.core.golden.trec import imported_trec

        return imported_trec(qrels, topics, field=field, corpus=corpus, **labels)

    _import_to_file(load, {"qrels file": qrels, "topics file": topics, "corpus": corpus}, **options)


_CORPUS_OPTION = click.option(
    "--corpus",
    "corpus",
    type=_FILE,
    help="The judged documents as a BEIR-style corpus.jsonl (_id, title, text), to tag the forms against. "
    "Default: the text the format gives of each turn's answer.",
)


@import_group.command("cast")
@click.option("--topics", "topics", required=True, type=_FILE, help="The topics JSON (a list of topics, each with its turns).")
@click.option("--qrels", "qrels", required=True, type=_FILE, help="TREC qrels whose query ids are <topic>_<turn>.")
@_CORPUS_OPTION
@click.option(
    "--rewrites",
    "rewrites",
    type=_FILE,
    help="Manual rewrites as '<topic>_<turn><TAB>text' lines (CAsT 2019's annotated_resolved TSV); they replace the topics' own.",
)
@_set_file_options("the topics file's name")
def cast(topics: Path, qrels: Path, corpus: Path | None, rewrites: Path | None, **options) -> None:
    """Write golden conversations from TREC CAsT (2019-2022) or iKAT (2023, 2024) topics and their qrels.

    Each topic is a conversation and each user turn a question `<topic>/<turn>` with its utterance, manual
    rewrite and canonical response; CAsT 2022's flattened file gives each path its own conversation
    `<topic>.<path>`. A conversation is kept up to its first turn without a relevant judgement (relevance
    > 0, or at least --min-relevance); the turns left out that way are named on stderr. See
    docs/golden-sets.md for the fields read.
    """

    def load(**labels):
        from retrieval_pipeline.core.golden.conversation_imports.cast import imported_cast

        return imported_cast(topics, qrels, corpus=corpus, rewrites=rewrites, **labels)

    inputs = {"topics file": topics, "qrels file": qrels, "corpus": corpus, "rewrites file": rewrites}
    _import_to_file(load, inputs, **options)


import_group.add_command(cast, "ikat")


def _records_command(style: str, gold: str) -> Callable:
    @click.argument("records", metavar="FILE", type=_FILE)
    @click.option("--qrels", "qrels", type=_FILE, help=f"TREC qrels (query ids <Conversation_no>_<Turn_no>) instead of {gold}.")
    @_CORPUS_OPTION
    @_set_file_options("the file's name")
    def command(records: Path, qrels: Path | None, corpus: Path | None, **options) -> None:
        def load(**labels):
            from retrieval_pipeline.core.golden.conversation_imports.records import imported_conversation_records

            return imported_conversation_records(records, style=style, qrels=qrels, corpus=corpus, **labels)

        _import_to_file(load, {"records file": records, "qrels file": qrels, "corpus": corpus}, **options)

    command.__doc__ = (
        f"Write golden conversations from a {style}-style FILE: JSON lines, or one JSON list, a record per turn.\n\n"
        f"Each record is a question `<Conversation_no>/<Turn_no>` with its Question, Rewrite and Answer, expecting "
        f"{gold}. A conversation is kept up to its first turn without one; the turns left out that way are "
        "named on stderr. See docs/golden-sets.md for the fields read."
    )
    return command


import_group.command("qrecc")(_records_command("QReCC", "its Answer_URL"))
import_group.command("topiocqa")(_records_command("TopiOCQA", "its Gold_passage id"))
