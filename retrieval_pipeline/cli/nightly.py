"""`retrieval-eval nightly`: the main job in one command, on the local Dagster instance.

It materializes every partition of the code location `dg dev` loads (every golden set, every retriever,
every set x retriever evaluation with its regression check, then the leaderboard, the label audits and
any query logs and coverage), one Dagster run per partition through the jobs the schedule and the
sensors use, in the order of the asset graph (dagster_layer/nightly.py), then prints the leaderboard and
the check verdicts. Its runs are launched against the code location, which it serves for the night with
the command it prints for the UI, so the UI can re-execute them (dagster_layer/launched_runs.py);
`--in-process` runs them in this process instead (CI: faster, no origin). A team runs the same
partitions on its workers with a backfill or the schedule (docs/production.md).

Exit codes (the command line's): 0 every check passed; 1 a regression failed a check of severity
ERROR; 2 invalid input (configuration, a set, a retriever that cannot be built); 3 an incomplete run
(the retriever failed on some questions), a service a retriever needs failing while it is built
(an embeddings endpoint encoding the corpus), or a run canceled in the UI during the night; 4 an unexpected error; 130 interrupted (Ctrl-C: the run
in progress ends canceled or failed in Dagster, and a run it had saved is kept as incomplete, never a baseline). With
several outcomes, the first that applies in the order 4, 2, 1, 3 wins.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path

import click
from click.core import ParameterSource

from retrieval_pipeline.cli.common import config_option, labels_option, store_option, traffic_option
from retrieval_pipeline.cli.errors import EXIT_INTERRUPTED, CommandError
from retrieval_pipeline.cli.render.nightly_report import NightlyReport, print_results
from retrieval_pipeline.demo.demos import DEMOS, build_dense_retrievers

HELPERS_LOG = "nightly-in-process-helpers.log"


def run_nightly(
    config_path=None,
    store_uri=None,
    *,
    instance=None,
    console=None,
    cwd: Path | None = None,
    demo: str | None = None,
    labels: str | None = None,
    traffic_log: str | None = None,
    in_process: bool = False,
) -> NightlyReport:
    """Evaluate every partition, one run each; `instance` defaults to the local one (cli/dagster_home.py).
    The runs are launched through that instance against the code location (dagster_layer/launched_runs.py),
    unless `in_process` or an `instance` is given: then each runs in this process, without an origin.
    `demo` names a shipped demo (retrieval_pipeline/demo/demos.py) to run instead of `config_path`.
    `traffic_log` weighs every set by that query log instead of its `traffic:`."""
    from retrieval_pipeline.cli.common import stdout_console
    from retrieval_pipeline.cli.dagster_home import open_instance, prepare_dagster_home
    from retrieval_pipeline.core.storage.store import ResultStore
    from retrieval_pipeline.dagster_layer.definitions import build_definitions
    from retrieval_pipeline.dagster_layer.names import PROJECT_RESOURCE
    from retrieval_pipeline.dagster_layer.nightly import Skipped, run_every_partition

    console = console or stdout_console()
    config_path = DEMOS[demo].config_path() if demo else config_path
    defs = build_definitions(config_path, store_uri, labels, traffic_log)  # invalid configuration: raised before anything runs
    project = defs.resources[PROJECT_RESOURCE]
    ResultStore(project.resolved_store_uri).check_writable()  # before anything is built or asked
    home = None
    if instance is None:
        home, seeded_from = prepare_dagster_home(cwd)
        console.print(f"Dagster instance: [bold]{home}[/bold]", soft_wrap=True, highlight=False)
        if seeded_from:
            console.print(f"  wrote {home / 'dagster.yaml'} (from {seeded_from})", soft_wrap=True, highlight=False)
        instance = open_instance(home)
    report = NightlyReport(home, project.resolved_config_path, project.resolved_store_uri)
    console.print(f"Configuration: {report.config_path}\nResult store: {report.store_uri}\n", soft_wrap=True, highlight=False)
    if demo:
        build_dense_retrievers(project.config, console)

    def on_outcome(outcome) -> None:
        if not isinstance(outcome, Skipped):
            report.outcomes.append(outcome)
        _print_progress(outcome, console)

    try:
        with (
            _helpers_output_apart(home if in_process else None),
            _progress_on_stderr(),
            _runner(defs, instance, home if not in_process else None, labels, traffic_log) as runner,
        ):
            run_every_partition(defs, runner, on_outcome)
    except KeyboardInterrupt:
        raise CommandError(report.interrupted_sentence(), EXIT_INTERRUPTED) from None
    finally:
        if home is not None:
            instance.dispose()
    print_results(report, project, console)
    return report


@contextmanager
def _helpers_output_apart(home: Path | None):
    """In process, Dagster's step log capture starts helper processes (`tail`, watch_orphans.py) in this
    terminal's process group: Ctrl-C reaches them too, and each would print a KeyboardInterrupt traceback
    before the one line. What they write goes to a log in the instance's folder; this process keeps the
    terminal as its sys.stderr."""
    if home is None:
        yield
        return
    sys.stderr.flush()
    terminal, shown = os.dup(2), sys.stderr
    with open(home / HELPERS_LOG, "ab") as log:
        os.dup2(log.fileno(), 2)
    sys.stderr = open(terminal, "w", encoding=shown.encoding, errors=shown.errors, closefd=False)  # noqa: SIM115
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(terminal, 2)
        os.close(terminal)
        sys.stderr = shown


@contextmanager
def _runner(defs, instance, home: Path | None, labels: str | None, traffic_log: str | None):
    """Runs launched against the code location, served with the environment the printed hint gives the UI;
    without a home of nightly's own (a given instance, `--in-process`), runs in this process."""
    from retrieval_pipeline.dagster_layer.launched_runs import LaunchedRuns, ui_environment
    from retrieval_pipeline.dagster_layer.nightly import InProcessRuns, project_of

    if home is None:
        yield InProcessRuns(defs, instance)
        return
    key, project = project_of(defs)
    chosen = {name: value for name, value in (("labels", labels), ("traffic_log", traffic_log)) if value}
    with LaunchedRuns(
        ui_environment(home, project),
        {"resources": {key: {"config": chosen}}} if chosen else None,
    ) as runs:
        yield runs


@contextmanager
def _progress_on_stderr():
    """A long build's progress (encoding a corpus) as lines on stderr, as `run` prints them off a terminal."""
    import logging

    from retrieval_pipeline.dagster_layer.assets import PROGRESS

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    level = PROGRESS.level
    PROGRESS.setLevel(logging.INFO)  # setLevel, not the attribute: it clears logging's cache of enabled levels
    PROGRESS.addHandler(handler)
    try:
        yield
    finally:
        PROGRESS.removeHandler(handler)
        PROGRESS.setLevel(level)


def _print_progress(outcome, console) -> None:
    """One line per failed set or retriever, skipped pair and evaluation, as each is known."""
    from rich.markup import escape

    from retrieval_pipeline.core.base.formatting import percent_or_blank
    from retrieval_pipeline.core.scoring.measures import TESTED
    from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, LEADERBOARD_JOB
    from retrieval_pipeline.dagster_layer.nightly import Skipped

    if isinstance(outcome, Skipped):
        console.print(f"[yellow]-[/yellow] {outcome.label}: skipped (its set or retriever failed above)", soft_wrap=True)
    elif outcome.job == EVALUATION_JOB:
        label = f"{outcome.set_identifier} × {outcome.retriever_identifier}"
        if not outcome.success:
            console.print(f"[red]✗[/red] {label}: {escape(outcome.message)}", soft_wrap=True)
        else:
            run, mark = outcome.run, "[green]✓[/green]" if outcome.check_passed else "[red]✗[/red]"
            rates = ", ".join(f"{rate.short} {percent_or_blank(run and run.hit_rate(rate.k))}" for rate in TESTED)
            console.print(f"{mark} {label}: {rates}. {escape(run and run.verdict_summary or '')}", soft_wrap=True)
    elif outcome.job != LEADERBOARD_JOB and not outcome.success:
        console.print(f"[red]✗[/red] {outcome.job} \\[{escape(outcome.partition)}]: {escape(outcome.message)}", soft_wrap=True)


@click.command("nightly")
@config_option
@store_option
@labels_option
@click.option(
    "--demo",
    type=click.Choice(sorted(DEMOS)),
    default=None,
    help="Run a shipped demo instead: embedding-swap (BM25 against MiniLM models; needs the [dense] extra).",
)
@traffic_option
@click.option(
    "--in-process",
    is_flag=True,
    help="Run each partition in this process: faster (CI), but the UI cannot re-execute these runs.",
)
def nightly(
    config_path: Path | None,
    store_uri: str | None,
    labels: str | None,
    demo: str | None,
    traffic_log: str | None,
    in_process: bool,
) -> None:
    """Run the nightly Dagster job now: every partition, on the local Dagster instance.

    Evaluates every set against every retriever of the configuration, checks each run for regressions
    against the previous run of the same pair, prints the leaderboard and the check verdicts, and
    records everything in the Dagster instance ($DAGSTER_HOME, else ./.dagster_home) so that
    `dagster dev` shows it: one Dagster run per partition, launched against the code location as the UI
    launches one (the UI can re-execute it), or with --in-process run in this process.
    Exit codes: 0 all checks passed; 1 a regression; 2 invalid input; 3 an incomplete run or a failing
    service; 4 an unexpected error; 130 interrupted (a run saved but not recorded by Dagster is kept as incomplete).
    """
    if demo and click.get_current_context().get_parameter_source("config_path") is ParameterSource.COMMANDLINE:
        raise click.UsageError("give --config or --demo, not both")  # a demo replaces $RETRIEVAL_EVAL_CONFIG's
    report = run_nightly(config_path, store_uri, demo=demo, labels=labels, traffic_log=traffic_log, in_process=in_process)
    sys.exit(report.exit_code)


def main() -> None:
    """`python -m retrieval_pipeline.cli.nightly`: the same command outside the `retrieval-eval` group."""
    from retrieval_pipeline.cli.errors import reported_errors

    try:
        with reported_errors():
            nightly.main(standalone_mode=False)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)


if __name__ == "__main__":
    main()
