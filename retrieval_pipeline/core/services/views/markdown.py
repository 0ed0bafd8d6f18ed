"""A run, or a comparison, as a short Markdown summary for CI job summaries and pull-request comments: for
a run the verdict, one table of rates against the baseline, the questions that flipped, the breakdowns
folded; for a comparison the retrievers side by side with their paired tests. Plain GitHub-flavoured
Markdown, no images, so it reads the same in a job summary, a comment and a terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrieval_pipeline.core.base.formatting import id_list
from retrieval_pipeline.core.services.views.figure_rows import MISSING

if TYPE_CHECKING:  # the views import this module only when asked for Markdown
    from retrieval_pipeline.core.scoring.results import RunResult
    from retrieval_pipeline.core.services.views.breakdowns import Breakdown
    from retrieval_pipeline.core.services.views.comparison_view import ComparedRun, ComparisonView
    from retrieval_pipeline.core.services.views.evaluation_view import EvaluationView

FLIPPED_LISTED = 20


def markdown_summary(view: EvaluationView, note: str | None = None) -> str:
    """`note`: a line under the verdict, e.g. that the run's own check found otherwise at the time."""
    run = view.run.result
    lines = [
        f"### Retrieval quality: `{run.set_identifier}` × `{run.retriever_identifier}`",
        "",
        f"**{view.verdict.label}**: {view.verdict.sentence}",
        *([f"_{note}_"] if note else []),
        "",
        "| metric | this run | baseline | change |",
        "|---|---:|---:|---:|",
        *[f"| {row.name} | {row.now_text} | {row.baseline_text} | {row.change_text} |" for row in view.reported],
        "",
        *_weighted_table(view),
        _run_line(view),
        *_approximate_lines(run),
    ]
    if view.set_change_line:
        lines += ["", view.set_change_line]
    if view.verdict.judged and (view.flipped_to_miss or view.flipped_to_hit):
        lines += [
            "",
            f"Flipped hit → miss ({view.lost_hits_count}): {id_list(view.flipped_to_miss, FLIPPED_LISTED)}  ",
            f"Flipped miss → hit ({len(view.flipped_to_hit)}): {id_list(view.flipped_to_hit, FLIPPED_LISTED)}",
        ]
    for breakdown in view.run.breakdowns:
        lines += ["", f"<details><summary>{breakdown.title}</summary>", "", *_group_table(breakdown), "", "</details>"]
    return "\n".join(lines) + "\n"


def _weighted_table(view: EvaluationView) -> list[str]:
    """The traffic-weighted figures under the plain ones, when a query log weighed the run."""
    if view.traffic is None:
        return []
    return [
        view.traffic.sentence,
        "",
        "| traffic-weighted | this run | baseline | change |",
        "|---|---:|---:|---:|",
        *[f"| {row.name} | {row.now_text} | {row.baseline_text} | {row.change_text} |" for row in view.reported_weighted],
        "",
    ]


def _group_table(breakdown: Breakdown) -> list[str]:
    headings = "".join(f" {figure.title} | Δ {figure.title} |" for figure in breakdown.figures)
    return [
        f"| group | questions |{headings}",
        "|---|---:|" + "---:|---:|" * len(breakdown.figures),
        *[
            f"| {row.key} | {row.questions} |" + "".join(f" {cell.text} | {cell.change_text} |" for cell in row.rates)
            for row in breakdown.rows
        ],
    ]


def _approximate_lines(run: RunResult) -> list[str]:
    """The approximate search's statement, bold, under the run line; nothing for an exact run."""
    return ["", f"**{run.approximation.sentence}**"] if run.approximation else []


def _run_line(view: EvaluationView) -> str:
    run, baseline_run_id = view.run.result, view.verdict.baseline_run_id
    errors = f", {len(run.errored_question_ids)} errored" if run.errored_question_ids else ""
    against = f", compared with run `{baseline_run_id}`" if baseline_run_id is not None else ""
    return f"Run `{run.run_id}` ({run.run_at:%Y-%m-%d %H:%M} UTC, {run.question_count} questions{errors}, labels {run.labels}){against}."


def comparison_markdown(view: ComparisonView) -> str:
    """Each retriever's tested rates with their change and p-value against the reference, then its
    headline ranking figures; under the table what the set edits left out and what survives correction."""
    tested = "".join(f" {figure.title} | Δ {figure.title} | p {figure.title} |" for figure in view.tested)
    ranking = "".join(f" {figure.title} |" for figure in view.ranking)
    lines = [
        f"### Retrieval quality: `{view.set_identifier}`, {len(view.runs)} retrievers compared",
        "",
        f"{view.reference.run.result.question_count} questions; reference `{view.reference.identifier}`; labels {view.reference.run.result.labels}.",
        "",
        f"| retriever |{tested}{ranking}",
        "|---|" + "---:|---:|---:|" * len(view.tested) + "---:|" * len(view.ranking),
        *[_compared_row(compared) for compared in view.runs],
    ]
    if view.traffic is not None:
        lines += ["", *_weighted_comparison(view)]
    if view.set_change_lines:
        lines += ["", *view.set_change_lines]
    approximate = [compared for compared in view.runs if compared.run.result.approximation]
    if approximate:
        lines += ["", *(f"`{c.identifier}`: **{c.run.result.approximation.sentence}**  " for c in approximate)]
    lines += ["", *(f"`{compared.identifier}`: {compared.slice_tests.surviving_sentence}" for compared in view.others)]
    return "\n".join(lines) + "\n"


def _weighted_comparison(view: ComparisonView) -> list[str]:
    """Each retriever's traffic-weighted headline figures and their change against the reference's."""
    figures = [row.figure for row in view.traffic.headline]
    return [
        view.traffic.sentence,
        "",
        "| retriever |" + "".join(f" weighted {figure.title} | Δ {figure.title} |" for figure in figures),
        "|---|" + "---:|---:|" * len(figures),
        *[
            f"| `{compared.identifier}` |"
            + "".join(
                f" {row.now_text} | {'ref' if row.change is None else row.change_text} |" for row in compared.traffic.headline
            )
            for compared in view.runs
        ],
    ]


def _compared_row(compared: ComparedRun) -> str:
    cells = [f"`{compared.identifier}`"]
    for rate, test in zip(compared.run.tested, compared.overall):
        cells += [rate.count_text, *(("ref", "ref") if test is None else (test.delta_text, test.p_text))]
    cells += [MISSING if row is None else row.text for row in compared.ranking]
    return "| " + " | ".join(cells) + " |"
