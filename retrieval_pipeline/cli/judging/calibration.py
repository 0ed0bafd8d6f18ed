"""`retrieval-eval judge calibrate FILE`: how far the machine judge agrees with people, and what to answer next."""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from retrieval_pipeline.cli.common import (
    FiniteFloatRange,
    config_option,
    json_option,
    load_project,
    open_store,
    refuse_output_over_input,
    stdout_console,
    store_option,
)
from retrieval_pipeline.cli.errors import CommandError


@click.command("calibrate", short_help="How far the machine judge agrees with the people; which rows to answer next.")
@click.argument("judging_file", metavar="FILE", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option(
    "--estimate",
    is_flag=True,
    help="Also the hit rates and nDCG of the latest runs human-only, machine-filled and prediction-powered.",
)
@click.option(
    "--width",
    type=FiniteFloatRange(min=0, min_open=True),
    default=0.2,
    show_default=True,
    help="The kappa interval width to reach: how many more human answers it takes.",
)
@click.option(
    "--next", "next_count", type=click.IntRange(min=1), help="How many rows to answer next, drawn at random (with --out)."
)
@click.option(
    "--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), help="With --next: the judging file to write them to."
)
@click.option("--seed", type=int, default=0, show_default=True, help="With --next: the random sample's seed.")
@click.option(
    "--set",
    "set_identifier",
    metavar="SET",
    help="The set the file was pooled from (default: the configured set asking all its questions).",
)
@json_option
@config_option
@store_option
@click.pass_context
def calibrate_command(ctx: click.Context, judging_file: Path, **options) -> None:
    """Say how far the machine judge's answers (machine_judgement) agree with the people's (judgement) on the
    rows of FILE that carry both: Cohen's kappa with its interval, the confusion, how many more human
    answers narrow it, and how the ranking of the retrievers changes with the machine's labels. With
    --next N --out F, write N rows to answer next, the machine's answers hidden; with --estimate, each
    retriever's figures estimated from both."""
    if options["next_count"] is None and ctx.get_parameter_source("seed") is ParameterSource.COMMANDLINE:
        raise click.UsageError("--seed draws the rows --next N writes: it goes with --next")
    calibrate(judging_file, **options)


def calibrate(
    judging_file: Path,
    *,
    width: float,
    next_count: int | None,
    out_path: Path | None,
    seed: int,
    set_identifier: str | None,
    estimate: bool,
    as_json: bool,
    config_path: Path | None,
    store_uri: str | None,
) -> None:
    from retrieval_pipeline.core.services.labels.calibration import BLIND, calibrate_file, next_rows
    from retrieval_pipeline.core.services.labels.judging_files import write_judging_file
    from retrieval_pipeline.core.services.views.judging.calibration import calibration_document, calibration_lines
    from retrieval_pipeline.core.services.views.judging.estimates import estimates_document, estimates_lines

    if (next_count is None) != (out_path is None):
        raise CommandError("--next N and --out FILE go together: how many rows to answer next, and where to write them")
    refuse_output_over_input(out_path, {"judging file": judging_file})
    config = load_project(config_path)
    store = open_store(store_uri, config)
    calibration, numbered, answered = calibrate_file(judging_file, width, config, store, set_identifier)
    chosen = next_rows(answered, next_count, seed) if next_count is not None else []
    estimated = _estimates(config, store, set_identifier, answered) if estimate else None
    if out_path is not None:
        write_judging_file([{name: numbered[i][1].get(name, "") for name in BLIND} for i in chosen], out_path)
    if as_json:
        from retrieval_pipeline.cli.render.payloads import emit

        document = calibration_document(calibration)
        if out_path is not None:
            document["next"] = {"file": str(out_path), "rows": len(chosen), "seed": seed}
        if estimated is not None:
            document["estimates"] = estimates_document(estimated)
        emit(document)
        return
    console = stdout_console()
    for line in [*calibration_lines(calibration), *(estimates_lines(estimated) if estimated is not None else [])]:
        console.print(line, highlight=False, markup=False)
    if out_path is not None:
        console.print(
            f"Wrote {len(chosen)} row(s) to answer next to {out_path} (seed {seed}, stratified by the machine's answer, machine answers hidden).",
            highlight=False,
            markup=False,
        )


def _estimates(config, store, set_identifier: str | None, answered):
    from retrieval_pipeline.core.services.labels.calibration import pooled_set_runs
    from retrieval_pipeline.core.services.labels.estimates import estimates

    question_set, runs = pooled_set_runs(config, store, set_identifier, answered)
    try:
        return estimates(question_set, runs, answered)
    except ValueError as error:
        raise CommandError(str(error)) from None
