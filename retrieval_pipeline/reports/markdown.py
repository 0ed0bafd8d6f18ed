"""A run as a short Markdown summary for CI job summaries and pull-request comments: the verdict, one
table of rates against the baseline, the questions that flipped, the breakdowns folded. Plain
GitHub-flavoured Markdown, no images, so it reads the same in a job summary, a comment and a terminal."""

from __future__ import annotations

from retrieval_pipeline.core.base.formatting import id_list
from retrieval_pipeline.core.services.evaluation import Evaluation
from retrieval_pipeline.reports.rows import breakdowns, compared, rate_rows, set_change_line, verdict_label

FLIPPED_LISTED = 20


def markdown_summary(evaluation: Evaluation, note: str | None = None) -> str:
    """`note`: a line under the verdict, e.g. that the run's own check found otherwise at the time."""
    run, report = evaluation.run, evaluation.report
    lines = [
        f"### Retrieval quality: `{run.set_identifier}` × `{run.retriever_identifier}`",
        "",
        f"**{verdict_label(evaluation)}**: {report.summary}",
        *([f"_{note}_"] if note else []),
        "",
        "| metric | this run | baseline | change |",
        "|---|---:|---:|---:|",
        *[f"| {row.metric} | {row.now} | {row.baseline} | {row.change} |" for row in rate_rows(evaluation)],
        "",
        _run_line(evaluation),
    ]
    if set_change_line(evaluation):
        lines += ["", set_change_line(evaluation)]
    if compared(evaluation) and (report.flipped_to_miss or report.flipped_to_hit):
        lines += [
            "",
            f"Flipped hit → miss ({len(report.flipped_to_miss)}): {id_list(report.flipped_to_miss, FLIPPED_LISTED)}  ",
            f"Flipped miss → hit ({len(report.flipped_to_hit)}): {id_list(report.flipped_to_hit, FLIPPED_LISTED)}",
        ]
    for title, rows in breakdowns(evaluation):
        lines += [
            "",
            f"<details><summary>{title}</summary>",
            "",
            "| group | questions | top-1 | Δ top-1 | top-3 | Δ top-3 |",
            "|---|---:|---:|---:|---:|---:|",
            *[f"| {r.group} | {r.questions} | {r.top1} | {r.top1_change} | {r.top3} | {r.top3_change} |" for r in rows],
            "",
            "</details>",
        ]
    return "\n".join(lines) + "\n"


def _run_line(evaluation: Evaluation) -> str:
    run = evaluation.run
    errors = f", {len(run.errored_question_ids)} errored" if run.errored_question_ids else ""
    against = f", compared with run `{evaluation.baseline.run_id}`" if evaluation.baseline is not None else ""
    return f"Run `{run.run_id}` ({run.run_at:%Y-%m-%d %H:%M} UTC, {run.question_count} questions{errors}){against}."
