"""`retrieval-eval nightly`: the main job in one command, in-process, on the local Dagster instance.

It materializes every partition of the code location `dagster dev` loads (every golden set, every
retriever, every set x retriever evaluation with its regression check, then the leaderboard) through
the same jobs the schedule and the sensor use, then prints the leaderboard and the check verdicts.
Where the schedule runs one partition per run, nightly runs each stage as one run over the range of
its partitions (partition_steps.py): one for the sets with their label checks, one for the
retrievers, one for the evaluations (more only when a broken set or retriever splits the range), one
for the leaderboard; the history charts are drawn meanwhile by one worker process
(reports/chart_worker.py). The runs are recorded in the Dagster instance, so `dagster dev` started
afterwards with the same DAGSTER_HOME shows every partition, the check results and the rate plots.

With `--launch` the same partitions are submitted to the instance instead, one run each so that the
workers share them (its run coordinator and run launcher, e.g. Celery workers; see launch.py and
docs/production.md) and awaited with a progress display; the printing and the exit codes are the same.

The instance: $DAGSTER_HOME when set, else `.dagster_home` in the current folder (created). A home
without a `dagster.yaml` gets the project's (the `dagster.yaml` of the current folder, else the same
settings embedded here: telemetry off, at most two concurrent runs), because Dagster reads the
instance configuration from DAGSTER_HOME, not from the folder `dagster dev` is started in.

Exit codes (the command line's): 0 every check passed; 1 a regression failed a check of severity
ERROR; 2 invalid input (configuration, a set, a retriever that cannot be built); 3 an incomplete run
(the retriever failed on some questions) or a service a retriever needs failing while it is built
(an embeddings endpoint encoding the corpus); 4 an unexpected error; 130 interrupted (Ctrl-C: the store is
first made to agree with the instance, see interruption.py). With several outcomes, the first that
applies in the order 4, 2, 1, 3 wins.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import click
from click.core import ParameterSource

from retrieval_pipeline.cli.common import config_option, store_option
from retrieval_pipeline.cli.errors import EXIT_INTERRUPTED, CommandError
from retrieval_pipeline.core.base.formatting import percent_or_blank
from retrieval_pipeline.core.scoring.results import utc_now
from retrieval_pipeline.dagster_layer.dagster_gaps import partition_range_tags
from retrieval_pipeline.dagster_layer.interruption import InterruptWatch, settle
from retrieval_pipeline.dagster_layer.nightly_report import NightlyReport, PartitionOutcome, print_results
from retrieval_pipeline.dagster_layer.run_outcomes import outcomes_from_events
from retrieval_pipeline.demo.demos import DEMOS, build_dense_retrievers

DEFAULT_HOME = ".dagster_home"
DEFAULT_INSTANCE_YAML = """\
# The local Dagster instance: SQLite storage under DAGSTER_HOME (Dagster's default), no telemetry, and
# at most two runs at once (the schedule and the sensor queue the rest). See docs/production.md.
telemetry:
  enabled: false

concurrency:
  runs:
    max_concurrent_runs: 2
"""
LAUNCHED_INTERRUPTED = (
    "interrupted (Ctrl-C): stopped waiting; the runs already submitted go on on the instance's workers, each "
    "recording its own partition (see the Dagster UI)"
)
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
"""Each failure is one line here (its message); Dagster's own console log would add its traceback, which
the run's event log keeps for the UI."""


def prepare_dagster_home(cwd: Path | None = None) -> tuple[Path, str | None]:
    """The instance folder (created), and where its dagster.yaml came from when this call wrote it."""
    cwd = cwd or Path.cwd()
    explicit = os.environ.get("DAGSTER_HOME")
    home = (Path(explicit).expanduser() if explicit else cwd / DEFAULT_HOME).resolve()
    home.mkdir(parents=True, exist_ok=True)
    target = home / "dagster.yaml"
    if target.exists():
        return home, None
    project_yaml = cwd / "dagster.yaml"
    if project_yaml.is_file() and project_yaml.resolve() != target:
        shutil.copyfile(project_yaml, target)  # bytes as they are: Dagster reads the file, not us
        return home, str(project_yaml)
    target.write_text(DEFAULT_INSTANCE_YAML, encoding="utf-8")
    return home, "the defaults built into retrieval-eval"


def run_nightly(
    config_path=None,
    store_uri=None,
    *,
    instance=None,
    console=None,
    cwd: Path | None = None,
    launch: Path | None = None,
    demo: str | None = None,
) -> NightlyReport:
    """Evaluate every partition in-process, or through the instance's launcher when `launch` names the
    workspace file; `instance` defaults to the local one (see the module doc). `demo` names a shipped
    demo (retrieval_pipeline/demo/demos.py) to run instead of `config_path`."""
    from dagster import DagsterInstance

    from retrieval_pipeline.cli.common import stdout_console
    from retrieval_pipeline.core.storage.store import ResultStore
    from retrieval_pipeline.dagster_layer.definitions import build_definitions
    from retrieval_pipeline.reports.chart_worker import shared_drawer

    console = console or stdout_console()
    config_path = DEMOS[demo].config_path() if demo else config_path
    defs = build_definitions(config_path, store_uri)  # invalid configuration: raised before anything runs
    project = defs.resources["project"]
    ResultStore(project.resolved_store_uri).check_writable()  # before anything is built, asked or launched
    home = None
    if instance is None:
        home, seeded_from = prepare_dagster_home(cwd)
        console.print(f"Dagster instance: [bold]{home}[/bold]", soft_wrap=True, highlight=False)
        if seeded_from:
            console.print(f"  wrote {home / 'dagster.yaml'} (from {seeded_from})", soft_wrap=True, highlight=False)
        os.environ["DAGSTER_HOME"] = str(home)  # this process's Dagster instance is the one printed above
        instance = DagsterInstance.get()
    report = NightlyReport(home, project.resolved_config_path, project.resolved_store_uri)
    console.print(f"Configuration: {report.config_path}\nResult store: {report.store_uri}\n", soft_wrap=True, highlight=False)
    if demo and launch is None:
        build_dense_retrievers(project.config, console)
    keys, started = _partition_keys(defs), utc_now()
    try:
        if launch is None:
            # One chart worker for the whole nightly, warm before the evaluations start (chart_worker.py).
            with shared_drawer(len(keys["golden_question_set"]) * len(keys["retriever_config"]) + 1), InterruptWatch() as watch:
                _run_all(defs, _in_process(defs, instance, project, watch), report, console)
        else:
            from retrieval_pipeline.dagster_layer.launch import run_submitter

            with run_submitter(instance, launch, defs, console) as submitter:
                submitter.check_partitions(keys)
                console.print(f"Launching on the instance's run launcher (tag retrieval_pipeline/launch={submitter.launch_id})")
                _run_all(defs, submitter, report, console)
    except KeyboardInterrupt:
        if launch is not None:
            raise CommandError(LAUNCHED_INTERRUPTED, EXIT_INTERRUPTED) from None
        pairs = [(s, r) for s in keys["golden_question_set"] for r in keys["retriever_config"]]
        settled = settle(instance, ResultStore(project.resolved_store_uri), pairs, started)
        raise CommandError(settled.sentence(), EXIT_INTERRUPTED) from None
    finally:
        if home is not None:
            instance.dispose()
    print_results(report, project, console)
    return report


def _partition_keys(defs) -> dict[str, list[str]]:
    return {
        asset: defs.resolve_assets_def(asset).partitions_def.get_partition_keys()
        for asset in ("golden_question_set", "retriever_config")
    }


def _run_all(defs, run_batch, report: NightlyReport, console) -> None:
    """Sets and retrievers, then the evaluations whose set and retriever built, then the leaderboard.
    `run_batch(requests, title)` runs (job, partition keys) requests, each a key range or `[None]`, and
    yields each partition's outcome as its run finishes."""
    from rich.markup import escape

    from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, LEADERBOARD_JOB, RETRIEVERS_JOB, SETS_JOB
    from retrieval_pipeline.dagster_layer.partitions import ProjectPartitions

    keys = _partition_keys(defs)
    partitions = ProjectPartitions(tuple(keys["golden_question_set"]), tuple(keys["retriever_config"]))
    broken: set[str] = set()
    inputs = [(SETS_JOB, list(partitions.set_identifiers)), (RETRIEVERS_JOB, list(partitions.retriever_identifiers))]
    for outcome in run_batch(inputs, "sets and retrievers"):
        report.outcomes.append(outcome)
        if not outcome.success:
            broken.add(outcome.partition)
            console.print(
                f"[red]✗[/red] {outcome.job} \\[{escape(outcome.partition)}]: {escape(outcome.error or '')}", soft_wrap=True
            )
    for key in partitions.evaluation_keys():
        if broken & set(partitions.dimensions(key)):
            label = " × ".join(partitions.dimensions(key))
            console.print(f"[yellow]-[/yellow] {label}: skipped (its set or retriever failed above)", soft_wrap=True)
    evaluations = [(EVALUATION_JOB, keys) for keys in partitions.evaluation_ranges(broken)]
    for outcome in run_batch(evaluations, "evaluations"):
        outcome.set_identifier, outcome.retriever_identifier = partitions.dimensions(outcome.partition)
        report.outcomes.append(outcome)
        label = f"{outcome.set_identifier} × {outcome.retriever_identifier}"
        if not outcome.success:
            console.print(f"[red]✗[/red] {label}: {escape(outcome.error or '')}", soft_wrap=True)
        else:
            mark = "[green]✓[/green]" if outcome.check_passed else "[red]✗[/red]"
            console.print(
                f"{mark} {label}: top-1 {percent_or_blank(outcome.top1_hit_rate)}, top-3 {percent_or_blank(outcome.top3_hit_rate)}. "
                f"{escape(outcome.verdict or '')}",
                soft_wrap=True,
            )
    report.outcomes.extend(run_batch([(LEADERBOARD_JOB, [None])], "leaderboard"))


def _in_process(defs, instance, project, watch: InterruptWatch):
    """`run_batch` for `_run_all`: each request run here, the leaderboard's chart started in the chart
    worker before Dagster sets up the leaderboard's run (its step then finds it drawn)."""
    from retrieval_pipeline.dagster_layer.definitions import LEADERBOARD_JOB
    from retrieval_pipeline.reports.chart_worker import chart_drawer
    from retrieval_pipeline.reports.charts import leaderboard_chart_png

    def run_batch(requests, title):
        for job_name, partition_keys in requests:
            if job_name == LEADERBOARD_JOB:
                board = project.leaderboard()
                if board.entries:
                    with chart_drawer(1) as drawer:
                        drawer.draw_ahead(leaderboard_chart_png, board)
            yield from _execute(defs, instance, job_name, partition_keys, watch)

    return run_batch


def _execute(defs, instance, job_name: str, partition_keys: list, watch: InterruptWatch) -> list[PartitionOutcome]:
    """One run for the whole range: the stage's bookkeeping is paid once, not once per partition."""
    if len(partition_keys) == 1:
        where = {"partition_key": partition_keys[0]}
    else:
        where = {"tags": partition_range_tags(str(partition_keys[0]), str(partition_keys[-1]))}
    result = defs.resolve_job_def(job_name).execute_in_process(
        instance=instance, raise_on_error=False, run_config=QUIET_RUN_CONFIG, **where
    )
    watch.raise_if_interrupted(result.all_events)
    return outcomes_from_events(job_name, partition_keys, result.success, result.all_events)


@click.command("nightly")
@config_option
@store_option
@click.option(
    "--demo",
    type=click.Choice(sorted(DEMOS)),
    default=None,
    help="Run a shipped demo instead: embedding-swap (BM25 against MiniLM models; needs the [dense] extra).",
)
@click.option(
    "--launch",
    is_flag=True,
    help="Submit the runs to the instance's run coordinator and launcher (e.g. Celery workers) instead of "
    "running them here; the code location comes from the workspace file.",
)
@click.option(
    "--workspace",
    "workspace_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("workspace.yaml"),
    show_default=True,
    help="With --launch: the workspace file naming the code location (the daemon's).",
)
def nightly(config_path: Path | None, store_uri: str | None, demo: str | None, launch: bool, workspace_file: Path) -> None:
    """Run the nightly Dagster job now: every partition, in-process, on the local Dagster instance.

    Evaluates every set against every retriever of the configuration, checks each run for regressions
    against the previous run of the same pair, prints the leaderboard and the check verdicts, and
    records everything in the Dagster instance ($DAGSTER_HOME, else ./.dagster_home) so that
    `dagster dev` shows it. With --launch, the runs go to the instance's run coordinator and launcher
    (a team's daemon and Celery workers, see docs/production.md) and this command waits for them.
    Exit codes: 0 all checks passed; 1 a regression; 2 invalid input; 3 an incomplete run or a failing
    service; 4 an unexpected error; 130 interrupted (every run it saved is then one Dagster recorded, or incomplete).
    """
    if demo and click.get_current_context().get_parameter_source("config_path") is ParameterSource.COMMANDLINE:
        raise click.UsageError("give --config or --demo, not both")  # a demo replaces $RETRIEVAL_EVAL_CONFIG's
    report = run_nightly(config_path, store_uri, launch=workspace_file.resolve() if launch else None, demo=demo)
    sys.exit(report.exit_code)


def main() -> None:
    """`python -m retrieval_pipeline.dagster_layer.nightly`: the same command outside the `retrieval-eval` group."""
    from retrieval_pipeline.cli.errors import reported_errors

    try:
        with reported_errors():
            nightly.main(standalone_mode=False)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)


if __name__ == "__main__":
    main()
