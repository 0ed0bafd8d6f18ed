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
import sys
from dataclasses import dataclass, field
from pathlib import Path

import click

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

EXIT_OK, EXIT_REGRESSION, EXIT_INVALID, EXIT_INCOMPLETE, EXIT_INTERNAL = 0, 1, 2, 3, 4


@dataclass
class PartitionOutcome:
    job: str
    partition: str
    success: bool
    set_identifier: str | None = None
    retriever_identifier: str | None = None
    error: str | None = None
    input_error: bool = False
    check_passed: bool | None = None
    check_severity: str | None = None
    verdict: str | None = None
    complete: bool | None = None
    is_regression: bool | None = None
    top1_hit_rate: float | None = None
    top3_hit_rate: float | None = None


@dataclass
class NightlyReport:
    dagster_home: Path | None
    config_path: Path
    store_uri: str
    outcomes: list[PartitionOutcome] = field(default_factory=list)

    @property
    def evaluations(self) -> list[PartitionOutcome]:
        from retrieval_pipeline.definitions import EVALUATION_JOB

        return [o for o in self.outcomes if o.job == EVALUATION_JOB]

    @property
    def exit_code(self) -> int:
        failed = [o for o in self.outcomes if not o.success]
        if any(not o.input_error for o in failed):
            return EXIT_INTERNAL
        if failed:
            return EXIT_INVALID
        if any(o.is_regression and o.check_severity == "ERROR" for o in self.evaluations):
            return EXIT_REGRESSION
        if any(o.complete is False for o in self.evaluations):
            return EXIT_INCOMPLETE
        return EXIT_OK


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
        target.write_text(project_yaml.read_text(encoding="utf-8"), encoding="utf-8")
        return home, str(project_yaml)
    target.write_text(DEFAULT_INSTANCE_YAML, encoding="utf-8")
    return home, "the defaults built into retrieval-eval"


def run_nightly(config_path=None, store_uri=None, *, instance=None, console=None, cwd: Path | None = None) -> NightlyReport:
    """Evaluate every partition in-process; `instance` defaults to the local one (see the module doc)."""
    from dagster import DagsterInstance
    from rich.console import Console

    from retrieval_pipeline.definitions import build_definitions

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
    _print_results(report, project, console)
    return report


def _run_all(defs, instance, report: NightlyReport, console) -> None:
    from rich.markup import escape

    from retrieval_pipeline.definitions import EVALUATION_JOB, LEADERBOARD_JOB, RETRIEVERS_JOB, SETS_JOB
    from retrieval_pipeline.partitions import ProjectPartitions

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
                f"{mark} {label}: top-1 {_pct(outcome.top1_hit_rate)}, top-3 {_pct(outcome.top3_hit_rate)}. "
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


def _print_results(report: NightlyReport, project, console) -> None:
    from rich.table import Table

    from retrieval_pipeline.core.leaderboard import build_leaderboard
    from retrieval_pipeline.core.store import ResultStore

    sets = list(dict.fromkeys(o.set_identifier for o in report.evaluations))
    retrievers = list(dict.fromkeys(o.retriever_identifier for o in report.evaluations))
    board = build_leaderboard(ResultStore(report.store_uri), sets, retrievers)
    for set_identifier in board.set_identifiers:
        entries = board.for_set(set_identifier)
        deeper = board.deeper_cutoffs(set_identifier)
        table = Table(title=f"Leaderboard: {set_identifier}", title_justify="left")
        for column in ("#", "retriever", "top-1", "top-3", *[f"top-{k}" for k in deeper], "p95 ms", "questions"):
            table.add_column(column, justify="left" if column == "retriever" else "right")
        for rank, entry in enumerate(entries, start=1):
            rates = dict(entry.hit_rates)
            table.add_row(
                str(rank),
                entry.retriever_identifier,
                _pct(entry.top1_hit_rate),
                _pct(entry.top3_hit_rate),
                *[_pct(rates.get(k)) for k in deeper],
                "" if entry.latency_p95_ms is None else f"{entry.latency_p95_ms:.2f}",
                str(entry.question_count),
            )
        console.print(table)
    checks = Table(title="Regression checks (retrieval_evaluation / no_regression)", title_justify="left")
    for column in ("set", "retriever", "check", "verdict"):
        checks.add_column(column)
    for outcome in report.evaluations:
        if not outcome.success:
            status, verdict = "[red]RUN FAILED[/red]", outcome.error or ""
        elif outcome.check_passed:
            status, verdict = "[green]PASSED[/green]", outcome.verdict or ""
        else:
            colour = "red" if outcome.check_severity == "ERROR" else "yellow"
            status, verdict = f"[{colour}]FAILED ({outcome.check_severity})[/{colour}]", outcome.verdict or ""
        checks.add_row(outcome.set_identifier, outcome.retriever_identifier, status, verdict)
    console.print(checks)
    if report.dagster_home is not None:
        exports = [f"export DAGSTER_HOME={report.dagster_home}"]
        if os.environ.get("RETRIEVAL_EVAL_CONFIG") != str(report.config_path) and not _is_default_config(report.config_path):
            exports.append(f"export RETRIEVAL_EVAL_CONFIG={report.config_path}")
        if project.store_uri:
            exports.append(f"export RETRIEVAL_EVAL_STORE={report.store_uri}")
        console.print("\nSee the runs, partitions, checks and rate plots in the Dagster UI (from the project folder):")
        for line in [*exports, "dagster dev"]:
            console.print(f"  {line}", highlight=False, soft_wrap=True, markup=False)


def _is_default_config(path: Path) -> bool:
    from retrieval_pipeline.core.config import default_config_path

    return default_config_path().resolve() == Path(path).resolve()


def _pct(rate: float | None) -> str:
    return "" if rate is None else f"{rate * 100:.1f}%"


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
    """`python -m retrieval_pipeline.nightly`: the same command outside the `retrieval-eval` group."""
    from retrieval_pipeline.cli.errors import reported_errors

    try:
        with reported_errors():
            nightly.main(standalone_mode=False)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)


if __name__ == "__main__":
    main()
