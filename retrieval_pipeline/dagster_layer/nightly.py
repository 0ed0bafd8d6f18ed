"""`retrieval-eval nightly`: the main job in one command, in-process, on the local Dagster instance.

It materializes every partition of the code location `dagster dev` loads (every golden set, every
retriever, every set x retriever evaluation with its regression check, then the leaderboard), one run
per partition through the same jobs the schedule and the sensor use, then prints the leaderboard and
the check verdicts. The runs are recorded in the Dagster instance, so `dagster dev` started afterwards
with the same DAGSTER_HOME shows every partition, the check results and the rate plots.

The instance: $DAGSTER_HOME when set, else `.dagster_home` in the current folder (created). A home
without a `dagster.yaml` gets the project's (the `dagster.yaml` of the current folder, else the same
settings embedded here: telemetry off, at most two concurrent runs), because Dagster reads the
instance configuration from DAGSTER_HOME, not from the folder `dagster dev` is started in.

Exit codes (the command line's): 0 every check passed; 1 a regression failed a check of severity
ERROR; 2 invalid input (configuration, a set, a retriever that cannot be built); 3 an incomplete run
(the retriever failed on some questions); 4 an unexpected error. With several outcomes, the first
that applies in the order 4, 2, 1, 3 wins.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import click

from retrieval_pipeline.dagster_layer.nightly_report import NightlyReport, PartitionOutcome, pct, print_results

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
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
INPUT_ERRORS = frozenset(
    {"RetrievalEvalError", "InvalidInputError", "UnknownIdentifierError", "DuplicateIdentifierError", "StoreError"}
)

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


def run_nightly(config_path=None, store_uri=None, *, instance=None, console=None, cwd: Path | None = None) -> NightlyReport:
    """Evaluate every partition in-process; `instance` defaults to the local one (see the module doc)."""
    from dagster import DagsterInstance
    from rich.console import Console

    from retrieval_pipeline.dagster_layer.definitions import build_definitions

    console = console or Console()
    defs = build_definitions(config_path, store_uri)  # invalid configuration: raised before anything runs
    project = defs.resources["project"]
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
    try:
        _run_all(defs, instance, report, console)
    finally:
        if home is not None:
            instance.dispose()
    print_results(report, project, console)
    return report


def _run_all(defs, instance, report: NightlyReport, console) -> None:
    from rich.markup import escape

    from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, LEADERBOARD_JOB, RETRIEVERS_JOB, SETS_JOB
    from retrieval_pipeline.dagster_layer.partitions import ProjectPartitions

    partitions = ProjectPartitions(
        tuple(defs.resolve_assets_def("golden_question_set").partitions_def.get_partition_keys()),
        tuple(defs.resolve_assets_def("retriever_config").partitions_def.get_partition_keys()),
    )
    broken: set[str] = set()
    for job, keys in ((SETS_JOB, partitions.set_identifiers), (RETRIEVERS_JOB, partitions.retriever_identifiers)):
        for key in keys:
            outcome = _execute(defs, instance, job, key)
            report.outcomes.append(outcome)
            if not outcome.success:
                broken.add(key)
                console.print(f"[red]✗[/red] {job} [{key}]: {escape(outcome.error or '')}", soft_wrap=True)
    for key in partitions.evaluation_keys():
        set_identifier, retriever_identifier = partitions.dimensions(key)
        label = f"{set_identifier} × {retriever_identifier}"
        if broken & {set_identifier, retriever_identifier}:
            console.print(f"[yellow]-[/yellow] {label}: skipped (its set or retriever failed above)", soft_wrap=True)
            continue
        outcome = _execute(defs, instance, EVALUATION_JOB, key)
        outcome.set_identifier, outcome.retriever_identifier = set_identifier, retriever_identifier
        report.outcomes.append(outcome)
        if not outcome.success:
            console.print(f"[red]✗[/red] {label}: {escape(outcome.error or '')}", soft_wrap=True)
        else:
            mark = "[green]✓[/green]" if outcome.check_passed else "[red]✗[/red]"
            console.print(
                f"{mark} {label}: top-1 {pct(outcome.top1_hit_rate)}, top-3 {pct(outcome.top3_hit_rate)}. "
                f"{escape(outcome.verdict or '')}",
                soft_wrap=True,
            )
    report.outcomes.append(_execute(defs, instance, LEADERBOARD_JOB, None))


def _execute(defs, instance, job_name: str, partition_key) -> PartitionOutcome:
    result = defs.resolve_job_def(job_name).execute_in_process(
        instance=instance, partition_key=partition_key, raise_on_error=False, run_config=QUIET_RUN_CONFIG
    )
    outcome = PartitionOutcome(job=job_name, partition=str(partition_key or ""), success=result.success)
    if not result.success:
        names, message = _failure(result)
        outcome.error = message
        outcome.input_error = bool(names & INPUT_ERRORS)
        return outcome
    for event in result.get_asset_materialization_events():
        metadata = event.materialization.metadata
        if "top1_hit_rate" in metadata:
            outcome.top1_hit_rate = metadata["top1_hit_rate"].value
            outcome.top3_hit_rate = metadata["top3_hit_rate"].value
    for evaluation in result.get_asset_check_evaluations():
        outcome.check_passed = evaluation.passed
        outcome.check_severity = evaluation.severity.value
        outcome.verdict = evaluation.description
        outcome.complete = evaluation.metadata["complete"].value
        outcome.is_regression = evaluation.metadata["is_regression"].value
    return outcome


def _failure(result) -> tuple[set[str], str]:
    """The class names along the error's cause chain, and the innermost message (the user's error)."""
    events = result.get_step_failure_events()
    error = events[0].step_failure_data.error if events else None
    names, message = set(), "the run failed"
    while error is not None:
        names.add(error.cls_name)
        text = error.message.strip()
        if text:  # "package.module.ClassName: what happened" -> "what happened"
            message = text.split(f"{error.cls_name}: ", 1)[-1].strip()
        error = error.cause
    return names, message


@click.command("nightly")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Project configuration (YAML). Default: $RETRIEVAL_EVAL_CONFIG, else the embedded demo.",
)
@click.option("--store", "store_uri", default=None, help="Result store URI, replacing the configuration's `store`.")
def nightly(config_path: Path | None, store_uri: str | None) -> None:
    """Run the nightly Dagster job now: every partition, in-process, on the local Dagster instance.

    Evaluates every set against every retriever of the configuration, checks each run for regressions
    against the previous run of the same pair, prints the leaderboard and the check verdicts, and
    records everything in the Dagster instance ($DAGSTER_HOME, else ./.dagster_home) so that
    `dagster dev` shows it. Exit codes: 0 all checks passed; 1 a regression; 2 invalid input;
    3 an incomplete run; 4 an unexpected error.
    """
    report = run_nightly(config_path, store_uri)
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
