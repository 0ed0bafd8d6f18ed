"""`retrieval-eval judge machine FILE --judge NAME [--probe]`: a machine judge fills the file's machine
columns, or probes whether query words stuffed into rejected documents fool it. The work is the core's
(`machine_judging`, `stuffing_probe`); this module parses, reports and counts an interruption."""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from retrieval_pipeline.cli.common import config_option, json_option, load_project, progress_bar, stdout_console
from retrieval_pipeline.cli.errors import INTERRUPTED, CommandError
from retrieval_pipeline.cli.render.payloads import emit
from retrieval_pipeline.core.base.exit_codes import EXIT_INCOMPLETE, EXIT_INTERRUPTED
from retrieval_pipeline.core.base.formatting import counted


@click.command("machine", short_help="Have a configured machine judge answer FILE (--probe: test it for query-word stuffing).")
@click.argument("judging_file", metavar="FILE", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option(
    "--judge",
    "judge_name",
    metavar="NAME",
    required=True,
    help="The configured machine judge (a name under `judges:`).",
)
@click.option(
    "--probe",
    is_flag=True,
    help="Instead: insert the question's words into rows people answered no and count how often the judge "
    "flips to yes; the file is not written.",
)
@click.option("--sample", type=click.IntRange(min=1), default=50, show_default=True, help="With --probe: rows to sample.")
@click.option("--seed", type=int, default=0, show_default=True, help="With --probe: the random sample's seed.")
@json_option
@config_option
@click.pass_context
def machine_command(
    ctx: click.Context,
    judging_file: Path,
    judge_name: str,
    probe: bool,
    sample: int,
    seed: int,
    as_json: bool,
    config_path: Path | None,
) -> None:
    """Have the configured machine judge NAME answer every row of FILE in columns of its own
    (machine_judgement, machine_grade, judged_by); the person's `judgement` is never touched. Resumable
    (Ctrl-C keeps every batch answered; run it again to go on), its answers cached; exit 3 when some rows
    could not be judged. With --probe, test the judge for query-word stuffing instead."""
    if probe:
        probe_judge(judging_file, judge_name, config_path, sample, seed, as_json)
        return
    for name in ("sample", "seed"):
        if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE:
            raise click.UsageError(f"--{name} samples the rows --probe asks about: it goes with --probe")
    machine_judge(judging_file, judge_name, config_path, as_json)


def machine_judge(path: Path, judge_name: str, config_path: Path | None, as_json: bool) -> None:
    from retrieval_pipeline.core.services.labels.judging_files import read_judging_file
    from retrieval_pipeline.core.services.labels.machine_judging import Tally, machine_judge_file

    config = load_project(config_path)
    judge = config.judge(judge_name)
    tally = Tally()
    try:
        with progress_bar(len(read_judging_file(path)), f"judging with {judge_name}") as advance:
            summary = machine_judge_file(path, judge, config.judgement_cache, tally, advance)
    except KeyboardInterrupt:
        raise CommandError(
            f"{INTERRUPTED}: the {tally.saved} row(s) {judge_name} answered in this pass before the batch in flight are "
            f"saved in {path}; run the same command again to resume",
            EXIT_INTERRUPTED,
        ) from None
    if as_json:
        emit(summary.to_dict())
    else:
        stdout_console().print(_summary_line(summary, path), markup=False, highlight=False)
    if summary.tally.errors:  # as `run` with retriever errors: the answers are saved, the pass is incomplete
        raise click.exceptions.Exit(EXIT_INCOMPLETE)


def _summary_line(summary, path: Path) -> str:
    document = summary.to_dict()
    errors = "; ".join(f"{count} x {cause}" for cause, count in document["errors_by_cause"].items())
    rate = document["rows_per_second"]
    cost = document["tokens_per_1000_rows"]
    return (
        f"{summary.judged} of {summary.rows} row(s) of {path} carry the answer of {summary.judged_by} ({summary.yes} yes); "
        f"{_requests_text(summary.tally)}, took {document['from_cache']} from the cache, skipped {document['already_judged']} "
        f"already judged; {document['errors']} error(s){': ' + errors if errors else ''}; "
        f"{_rate_text(summary.tally, rate)}; "
        f"{'tokens not reported' if cost is None else f'{cost:,.0f} tokens per 1,000 rows'}"
    )


def _requests_text(tally) -> str:
    """Requests sent against answers got: `asked` alone counts only the answers, so a pass whose every
    request failed would read `asked 0`."""
    if not tally.failed:
        return f"this pass asked {tally.asked}"
    sent = counted(tally.asked + tally.failed, "request")
    return f"this pass sent {sent}: {'none' if not tally.asked else tally.asked} answered, {tally.failed} failed"


def _rate_text(tally, rate: float | None) -> str:
    if rate is None and tally.failed:
        return "no answer to time"
    return f"{'n/a' if rate is None else f'{rate:g}'} row(s)/s asked"


def probe_judge(path: Path, judge_name: str, config_path: Path | None, sample: int, seed: int, as_json: bool) -> None:
    from retrieval_pipeline.core.base.formatting import percent
    from retrieval_pipeline.core.services.labels.stuffing_probe import stuffing_probe

    config = load_project(config_path)
    result = stuffing_probe(path, config.judge(judge_name), config.judgement_cache, sample, seed)
    if as_json:
        emit({"judge": judge_name, **result.to_dict()})
        return
    if not result.human_no:
        click.echo(
            f"Stuffing probe of {judge_name}: no row of {path} has a person's no to stuff; "
            f"answer some rows first (retrieval-eval judge {path}), then probe again."
        )
        return
    low, high = result.interval
    share = "n/a" if result.share is None else f"{percent(result.share)} (95% interval {percent(low)} to {percent(high)})"
    click.echo(
        f"Stuffing probe of {judge_name} on {result.sampled} of the {result.human_no} row(s) people answered no (seed {result.seed}): "
        f"{result.flipped} of {result.no_as_written} flipped to yes once the question's words were inserted: {share}; "
        f"it already said yes to {result.yes_as_written} as written; {result.errors} row(s) with an error."
    )
