"""`retrieval-eval generate SET [LOG] --generator NAME --count N --out FILE`: candidate questions for the
set's gaps, in the judging-file shape. The work is the core's (`generated.plan`, `generated.generation`); this
module parses, refuses what would overwrite answers, reports, and counts an interruption."""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_pipeline.cli.common import (
    config_option,
    json_option,
    load_project,
    progress_bar,
    refuse_output_over_input,
    status,
    stdout_console,
)
from retrieval_pipeline.cli.errors import INTERRUPTED, CommandError
from retrieval_pipeline.core.base.exit_codes import EXIT_INCOMPLETE, EXIT_INTERRUPTED
from retrieval_pipeline.core.base.formatting import counted


@click.command("generate")
@click.argument("set_name", metavar="SET")
@click.argument("log", metavar="[LOG]", required=False)
@config_option
@json_option
@click.option(
    "--generator", "generator_name", required=True, help="The generator (under `generators:`) that writes the questions."
)
@click.option(
    "--count", type=click.IntRange(min=1), metavar="N", required=True, help="How many questions to ask the generator for."
)
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The judging file to write (.csv or .jsonl).",
)
@click.option(
    "--from",
    "origin",
    type=click.Choice(["log", "corpus"]),
    default="log",
    show_default=True,
    help="log: LOG's uncovered clusters, by traffic; corpus: documents no question expects and no logged query reaches.",
)
@click.option("--form", type=click.Choice(["match", "gap"]), help="Ask for this form only (default: the set's own mix).")
@click.option(
    "--examples/--no-examples",
    default=None,
    help="Send each cluster's most asked queries to the generator: refused unless the log says examples: true "
    "(default: sent only where it does) / never.",
)
@click.option(
    "--retriever",
    "retrievers",
    multiple=True,
    help="A retriever whose top documents go beside each question (default: every one).",
)
@click.option("--depth", type=click.IntRange(min=1), default=10, show_default=True, help="Each retriever's top K.")
@click.option("--seed", type=int, default=0, show_default=True, help="The seed of --from corpus's sample of documents.")
def generate(
    set_name, log, config_path, as_json, generator_name, count, out_path, origin, form, examples, retrievers, depth, seed
) -> None:
    """Ask a generator for N candidate questions about SET's gaps and write them, each with its source
    document as the presumed answer and the retrievers' top documents beside it, in the judging-file shape
    `pool` writes. From LOG's uncovered clusters (`coverage SET LOG`) in proportion to their traffic, or
    (--from corpus) from documents no golden question expects and no query of LOG (default: the set's
    `traffic:` log) reaches. Empty, garbled, copied and near-duplicate questions are dropped and counted.
    Answers are cached: run the command again to resume. Then judge FILE as any pooled file."""
    from retrieval_pipeline.core.services.generated.generation import planned_generation
    from retrieval_pipeline.core.services.generated.plan import GenerationOrder
    from retrieval_pipeline.core.services.labels.machine_judging import Tally

    config = load_project(config_path)
    refuse_output_over_input(out_path, {"set file": Path(set_name), "query log": config.query_log(log)[1] if log else None})
    order = GenerationOrder(
        set_name, generator_name, count, out_path, origin, log, form, tuple(retrievers), depth, seed, examples
    )
    with status("Choosing what to generate from"):
        planned = planned_generation(config, order)
    plan, tally = planned.plan, Tally()
    try:
        with progress_bar(len(plan.sources), f"generating with {generator_name}") as advance:
            summary = planned.generate(tally, advance)
    except KeyboardInterrupt:
        raise CommandError(
            f"{INTERRUPTED}: the {tally.saved} question(s) {generator_name} wrote in this pass are cached; {out_path} was "
            "not written; run the same command again to resume",
            EXIT_INTERRUPTED,
        ) from None
    if as_json:
        from retrieval_pipeline.cli.render.payloads import emit

        emit({"out": str(out_path), "from": origin, "log": plan.log, "uncovered_clusters": plan.clusters, **summary.to_dict()})
    else:
        stdout_console().print(_summary_line(summary, plan, origin, count, out_path), markup=False, highlight=False)
    if summary.tally.errors:
        causes = "; ".join(f"{number} x {cause}" for cause, number in summary.tally.errors.most_common())
        raise CommandError(
            f"generator {generator_name} failed on {summary.tally.failed} of {summary.planned} request(s): {causes}; the "
            f"{summary.planned - summary.tally.failed} it answered are cached and their candidates written to {out_path}; "
            "run the same command again to ask for the rest",
            EXIT_INCOMPLETE,
        )


def _summary_line(summary, plan, origin: str, count: int, out: Path) -> str:
    document = summary.to_dict()
    if origin == "corpus":
        source = f"{counted(summary.planned, 'document')} no question expects" + (
            f" and no query of {plan.log} reaches" if plan.log else ""
        )
    else:
        source = f"{counted(plan.clusters, 'uncovered cluster')} of {plan.log}, by traffic"
    short = f" (only {summary.planned} of the {count} asked for could be drawn)" if summary.planned < count else ""
    dropped = ", ".join(f"{number} {reason}" for reason, number in document["dropped_by_reason"].items() if number)
    return (
        f"Wrote {counted(summary.written, 'candidate question')}, {counted(summary.rows, 'row')} to judge, into {out}: "
        f"{summary.generated_by} from {source}{short}; asked {document['asked']}, {document['from_cache']} from the cache, "
        f"{document['errors']} error(s); dropped {document['dropped']}{': ' + dropped if dropped else ''}; {document['seconds']:g} s"
    )
