"""`retrieval-eval validate-generated SET`: do SET's generated questions rank the retrievers as its human
questions do, and may they count in its verdicts?

A command of its own rather than an option of `generate`: it asks no generator and writes no candidates;
it reads the stored runs of SET and SET.generated (core/services/generated/validation.py) and, with
--accept, records the decision in the set file. The figures are shown even when --accept is refused.
"""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_pipeline.cli.common import config_option, json_option, load_project, open_store, stdout_console, store_option


@click.command("validate-generated")
@click.argument("set_name", metavar="SET")
@click.option("--accept", is_flag=True, help="Record in the set file that its generated questions count in its verdicts.")
@click.option(
    "--by", metavar="NAME", help="With --accept: a person's decision, recorded with NAME, even below generation.min_tau."
)
@config_option
@store_option
@json_option
def validate_generated(set_name: str, accept: bool, by: str | None, config_path, store_uri, as_json: bool) -> None:
    """Compare the configured retrievers' ranking on SET's human questions with their ranking on its
    generated ones, from their latest complete runs of SET and SET.generated: Kendall's tau with a 95%
    bootstrap interval over questions for top-1, top-3 and nDCG, and each retriever's difference (generated
    less human). SET is a configured set or a set file. --accept records, in the set file, that the
    generated questions count in SET's verdicts, when every interval's lower bound reaches
    `generation.min_tau` (default 0.8); --accept --by NAME records a person's decision whatever the figures."""
    from datetime import datetime, timezone

    from retrieval_pipeline.core.services.generated.validation import record_counted, validate_generated
    from retrieval_pipeline.core.services.traffic.coverage import named_set

    if by is not None and not accept:
        raise click.UsageError("--by names who decides to count the generated questions: it goes with --accept")
    if by is not None and not by.strip():
        raise click.UsageError("--by names who decides to count the generated questions: give a name, not an empty text")
    config = load_project(config_path)
    question_set = named_set(config, set_name)
    store = open_store(store_uri, config)
    validation = validate_generated(question_set, store, list(config.retriever_specs), config.generation.min_tau)
    path = _set_file(config, set_name, question_set.identifier) if accept else None
    recorded = None
    try:
        if path is not None:
            recorded = record_counted(path, validation, by, datetime.now(timezone.utc).isoformat(timespec="seconds"))
    finally:
        _report(validation, recorded, path, as_json)


def _set_file(config, set_name: str, identifier: str) -> Path:
    from retrieval_pipeline.cli.errors import CommandError
    from retrieval_pipeline.core.golden.question_files import SET_FILE_SUFFIXES

    given = Path(set_name).expanduser()
    path = given if given.suffix in SET_FILE_SUFFIXES and given.is_file() else Path(config.question_sets.source_of(identifier))
    if path.suffix not in SET_FILE_SUFFIXES or not path.is_file():
        raise CommandError(f"set {identifier!r} is not read from a set file ({path}): record generated_questions there by hand")
    return path


def _report(validation, recorded, path: Path | None, as_json: bool) -> None:
    from retrieval_pipeline.core.scoring.measures import figure_of

    if as_json:
        from retrieval_pipeline.cli.render.payloads import emit

        emit({**validation.to_dict(), "recorded": recorded.model_dump(mode="json") if recorded else None})
        return
    console = stdout_console()
    say = lambda text="": console.print(text, highlight=False, markup=False)  # noqa: E731
    identifier = validation.set_identifier
    say(
        f"{identifier}: {validation.human_questions} human and {validation.generated_questions} generated questions, "
        f"the latest complete runs of {len(validation.runs)} retrievers ({', '.join(validation.runs)})"
    )
    say("Kendall's tau between the retrievers' rankings on the two (95% bootstrap interval over questions):")
    width = max(len(figure_of(a.measure).title) for a in validation.agreements)
    for agreement in validation.agreements:
        tau = "  n/a" if agreement.tau is None else f"{agreement.tau:+.2f}"
        low, high = agreement.interval
        say(
            f"  {figure_of(agreement.measure).title:<{width}}  tau {tau}  [{low:+.2f}, {high:+.2f}]: "
            + agreement.gate_text(validation.threshold)
        )
    say("Each retriever, human -> generated (difference):")
    for name in validation.runs:
        cells = []
        for agreement in validation.agreements:
            figure = figure_of(agreement.measure)
            human, generated = agreement.human[name], agreement.generated[name]
            cells.append(
                f"{figure.title} {figure.text(human)} -> {figure.text(generated)} ({figure.change_text(generated - human)})"
            )
        say(f"  {name}: " + "; ".join(cells))
    if recorded is not None:
        why = "validated" if recorded.because == "validated" else f"a person's decision, by {recorded.by}"
        say(f"Recorded in {path} ({why}): the {recorded.questions} generated questions now count in {identifier}'s verdicts.")
    elif validation.reached:
        say(f"Every lower bound reaches {validation.threshold:g}: --accept records that they count in {identifier}'s verdicts.")
    elif path is None:
        say(
            f"Not reached: the generated questions stay apart from {identifier}'s verdicts (--accept --by NAME to count them anyway)."
        )
