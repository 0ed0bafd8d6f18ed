"""What `retrieval-eval nightly` found: each partition's outcome, the exit code, and the printed summary
(the leaderboard, the check verdicts, and how to open the same runs in the Dagster UI)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from retrieval_pipeline.core.base.exit_codes import EXIT_FAILED, EXIT_INCOMPLETE, EXIT_INTERNAL, EXIT_INVALID, EXIT_OK


@dataclass
class NightlyReport:
    dagster_home: Path | None
    config_path: Path
    store_uri: str
    outcomes: list = field(default_factory=list)
    """Each partition's `PartitionOutcome` (dagster_layer/nightly.py)."""

    @property
    def evaluations(self) -> list:
        from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB

        return [o for o in self.outcomes if o.job == EVALUATION_JOB]

    def interrupted_sentence(self) -> str:
        finished = [f"{o.set_identifier} × {o.retriever_identifier}" for o in self.evaluations if o.run is not None]
        return (
            f"interrupted (Ctrl-C): {len(finished)} evaluations finished and recorded in Dagster"
            + (f" ({', '.join(finished)})" if finished else "")
            + "; the run in progress ends canceled or failed in Dagster, and a run it had saved is kept as incomplete, never a baseline"
        )

    @property
    def exit_code(self) -> int:
        from retrieval_pipeline.core.scoring.checks.regression import Verdict

        failed = [o for o in self.outcomes if not o.success]
        if any(not (o.input_error or o.service_error or o.canceled) for o in failed):
            return EXIT_INTERNAL
        if any(o.input_error for o in failed):
            return EXIT_INVALID
        if any(o.run and o.run.verdict == Verdict.REGRESSION and o.check.severity == "ERROR" for o in self.evaluations):
            return EXIT_FAILED
        if failed or any(o.run and not o.run.complete for o in self.evaluations):
            return EXIT_INCOMPLETE
        return EXIT_OK


def print_results(report: NightlyReport, project, console) -> None:
    from rich.table import Table

    from retrieval_pipeline.cli.common import identifier_column
    from retrieval_pipeline.cli.render.fitted_tables import Column, print_fitted
    from retrieval_pipeline.core.scoring.stats.slice_tests import TESTED_CUTOFFS
    from retrieval_pipeline.core.services.evaluation.leaderboard import build_leaderboard, figure_cells
    from retrieval_pipeline.core.services.evaluation.leaderboard_turns import turn_entries
    from retrieval_pipeline.core.services.views.figure_rows import is_hit_rate
    from retrieval_pipeline.core.storage.store import ResultStore

    sets = list(dict.fromkeys(o.set_identifier for o in report.evaluations))
    retrievers = list(dict.fromkeys(o.retriever_identifier for o in report.evaluations))
    board = build_leaderboard(ResultStore(report.store_uri), sets, retrievers, rank_by=project.config.rank_by)
    for set_identifier in board.set_identifiers:
        shown = board.figures(set_identifier)
        # a narrow terminal leaves out the questions, the latency, then the figures from the right; never
        # the figure the board is ranked by, nor top-1 and top-3
        kept = [figure == board.rank_by or (is_hit_rate(figure) and figure.k in TESTED_CUTOFFS) for figure in shown]
        columns = [Column("#"), Column("retriever", "left", identifier=True)]
        columns += [Column(figure.short, optional=0 if keep else 1) for figure, keep in zip(shown, kept)]
        columns += [Column("latency ms", optional=2), Column("questions", optional=3)]
        rows = [
            [
                str(rank),
                entry.retriever_identifier,
                *figure_cells(entry.summary, shown),
                entry.summary.latency_text,
                str(entry.summary.question_count),
            ]
            for rank, entry in enumerate(board.for_set(set_identifier), start=1)
        ]
        print_fitted(console, f"Leaderboard: {set_identifier}, {board.ranking}", columns, rows)
        print_depths(console, set_identifier, turn_entries(board.summaries(set_identifier)))
    checks = Table(title="Regression checks (retrieval_evaluation / no_regression)", title_justify="left")
    identifier_column(checks, "set")
    identifier_column(checks, "retriever")
    checks.add_column("check")
    checks.add_column("verdict")
    for outcome in report.evaluations:
        if not outcome.success:
            status, verdict = "[red]RUN FAILED[/red]", outcome.message
        elif outcome.check_passed:
            status, verdict = "[green]PASSED[/green]", outcome.run.verdict_summary or ""
        else:
            severity = outcome.check and outcome.check.severity
            colour = "red" if severity == "ERROR" else "yellow"
            status, verdict = f"[{colour}]FAILED ({severity})[/{colour}]", outcome.run and outcome.run.verdict_summary or ""
        checks.add_row(outcome.set_identifier, outcome.retriever_identifier, status, verdict)
    console.print(checks)
    if report.dagster_home is not None:
        from retrieval_pipeline.dagster_layer.launched_runs import ui_command_line, ui_environment

        environment = ui_environment(report.dagster_home, project)
        console.print("\nSee the runs, partitions, checks and history charts in the Dagster UI (from any folder):")
        console.print(f"  {ui_command_line(environment)}", highlight=False, soft_wrap=True, markup=False)


def print_depths(console, set_identifier: str, rows) -> None:
    """A set of conversations: each retriever's top-1 / top-3 by turn depth, its conversations all hit and
    its gap beside the set's rewrite run (leaderboard_turns.py); nothing for a set without turns."""
    from retrieval_pipeline.cli.render.fitted_tables import Column, print_fitted
    from retrieval_pipeline.core.golden.conversations import DEPTHS

    if not rows:
        return
    gap = any(row.gap is not None for row in rows)
    columns = [Column("retriever", "left", identifier=True), *[Column(f"depth {depth}") for depth in DEPTHS]]
    columns += [Column("all hit@3", optional=1)] + ([Column("gap vs rewrite")] if gap else [])
    cells = []
    for row in rows:
        depths = [row.depth_text(depth) for depth in DEPTHS]
        cells.append([row.retriever_identifier, *depths, row.all_hit_text, *([row.gap_text] if gap else [])])
    print_fitted(console, f"By turn depth (top-1 / top-3): {set_identifier}", columns, cells)
