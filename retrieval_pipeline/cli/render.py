"""Rich tables and lines for people; the figures all come from the core, nothing is computed here."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from retrieval_pipeline.core.base.formatting import (  # noqa: F401 (used as render.*)
    id_list,
    interval_text,
    p_value,
    percent,
    rate_with_counts,
    signed,
    signed_pp,
)
from retrieval_pipeline.core.scoring.change_breakdown import GroupDelta
from retrieval_pipeline.core.scoring.regression import RegressionReport, Verdict
from retrieval_pipeline.core.scoring.results import GroupRates, QuestionResult, RunResult

AUTO_SHOW_ALL_UP_TO = 50
MAX_RETRIEVED_SHOWN = 3
MAX_FLIPPED_SHOWN = 20


def _can_encode(text: str) -> bool:
    try:
        text.encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _marks() -> tuple[str, str]:
    """✓ and ✗ where stdout can encode them, words elsewhere (a legacy code page)."""
    return ("✓", "✗") if _can_encode("✓✗") else ("yes", "no")


def p_phrase(value: float) -> str:
    return "p < 0.001" if value < 0.001 else f"p = {value:.3f}"


def id_sequence(ids: Sequence[str], limit: int = MAX_FLIPPED_SHOWN) -> str:
    """Ids in one line, capped: a big regression must not bury the verdict."""
    if not ids:
        return "—"
    shown = ", ".join(ids[:limit])
    return shown if len(ids) <= limit else f"{shown} … (+{len(ids) - limit} more; --json lists all)"


def hit_mark(hit: bool | None) -> Text:
    if hit is None:
        return Text("error", style="bold red")
    hit_text, miss_text = _marks()
    return Text(hit_text, style="green") if hit else Text(miss_text, style="red")


def retrieved_text(question: QuestionResult, limit: int = MAX_RETRIEVED_SHOWN) -> Text:
    """The first retrieved ids, the expected ones highlighted."""
    retrieved = question.retrieved_document_ids
    if not retrieved:
        return Text("—")
    text = Text()
    for index, document_id in enumerate(retrieved[:limit]):
        if index:
            text.append(", ")
        text.append(document_id, style="bold green" if document_id in question.expected_document_ids else "")
    if len(retrieved) > limit:
        text.append(f" +{len(retrieved) - limit}")
    return text


def hit_rank_cell(question: QuestionResult) -> str:
    """Where the first expected document came; a question that nothing answers has no such rank."""
    rank = question.first_hit_rank if question.expected_document_ids else None
    return "—" if rank is None else str(rank)


def selected_questions(run: RunResult, show: str) -> tuple[list[QuestionResult], str | None]:
    """`auto` lists every question of a small set and only the misses of a large one."""
    import numpy as np

    if show == "none":
        return [], None
    if show == "all" or (show == "auto" and run.question_count <= AUTO_SHOW_ALL_UP_TO):
        return list(run.questions), None
    misses = list(run.questions.take(np.flatnonzero(~run.questions.hits(3))))
    note = f"{len(misses)} of {run.question_count} questions shown: top-3 misses and errors (--show all lists every question)."
    return misses, note


def question_table(questions: Sequence[QuestionResult]) -> Table:
    """One row per question; `hit rank` is where the first expected document came (up to the deepest cut-off)."""
    with_errors = any(question.error is not None for question in questions)
    table = Table(title="Questions", title_justify="left")
    for header in ("id", "form", "class"):
        table.add_column(header, no_wrap=True)
    table.add_column("top-1", justify="center", min_width=5)
    table.add_column("top-3", justify="center", min_width=5)
    table.add_column("hit rank", justify="right")
    table.add_column("retrieved")
    table.add_column("expected")
    table.add_column("ms", justify="right")
    if with_errors:
        table.add_column("error", style="red")
    for question in questions:
        answered = question.error is None
        row = [
            question.question_id,
            question.form,
            question.hard_class or "",
            hit_mark(question.top1_hit),
            hit_mark(question.top3_hit),
            hit_rank_cell(question) if answered else "",
            retrieved_text(question) if answered else Text(""),
            id_list(question.expected_document_ids) if question.expected_document_ids else "(none)",
            f"{question.latency_ms:.1f}" if answered else "",
        ]
        table.add_row(*row, *([question.error or ""] if with_errors else []))
    return table


def rate_lines(run: RunResult) -> list[str]:
    intervals = run.intervals()
    return [
        f"Top-{k} hit rate: {rate_with_counts(run.hit_count(k), run.question_count, run.hit_rate(k))}, "
        f"{interval_text(intervals[f'top{k}'])}"
        for k in run.cutoffs
    ]


def metric_label(name: str) -> str:
    """`mrr@10` as people write it: MRR@10, nDCG@10, Recall@10."""
    metric, _, depth = name.partition("@")
    return {"mrr": "MRR", "ndcg": "nDCG", "recall": "Recall"}.get(metric, metric) + f"@{depth}"


def metrics_line(run: RunResult) -> str:
    return "Ranking: " + " · ".join(f"{metric_label(name)} {value:.3f}" for name, value in run.metrics().items())


def latency_text(run: RunResult) -> str | None:
    """Percentiles when each question was timed; the batch mean, named as such, when questions were timed in batches."""
    latency = run.latency_summary()
    if not latency:
        return None
    if "batch_mean" in latency:
        return f"batch mean {latency['batch_mean']:.1f} ms per question (timed in batches: no percentiles)"
    return " · ".join(f"{name} {value:.1f} ms" for name, value in latency.items())


def latency_line(run: RunResult) -> str | None:
    text = latency_text(run)
    return None if text is None else f"Latency: {text}"


def breakdown_table(
    title: str,
    groups: dict[str, GroupRates],
    deltas: Sequence[GroupDelta] = (),
    metrics: dict[str, dict[str, float]] | None = None,
) -> Table | None:
    """Rates per key (and MRR and nDCG at the deepest cut-off); with a baseline, its deltas too (a key
    only the baseline had shows 0 questions)."""
    metrics = metrics or {}
    shown_metrics = [name for name in next(iter(metrics.values()), {}) if not name.startswith("recall@")]
    by_key = {delta.key: delta for delta in deltas}
    keys = list(groups) + [key for key in by_key if key not in groups]
    if not keys:
        return None
    table = Table(title=title, title_justify="left")
    table.add_column(title.removeprefix("By ").lower() if title.startswith("By ") else "key")
    table.add_column("questions", justify="right")
    table.add_column("top-1", justify="right")
    table.add_column("top-3", justify="right")
    for name in shown_metrics:
        table.add_column(metric_label(name), justify="right")
    if deltas:
        table.add_column("Δ top-1", justify="right")
        table.add_column("Δ top-3", justify="right")
    for key in keys:
        rates = groups.get(key, GroupRates(0, 0, 0))
        row = [key, str(rates.questions), percent(rates.top1_hit_rate), percent(rates.top3_hit_rate)]
        row += [f"{metrics[key][name]:.3f}" if key in metrics else "—" for name in shown_metrics]
        if deltas:
            delta = by_key.get(key)
            row += [_delta_text(delta.top1_delta if delta else None), _delta_text(delta.top3_delta if delta else None)]
        table.add_row(*row)
    return table


def _delta_text(delta: float | None) -> Text:
    style = "" if delta is None or abs(delta) < 1e-12 else ("green" if delta > 0 else "red")
    return Text(signed_pp(delta), style=style)


def print_regression(console: Console, report: RegressionReport, complete: bool = True) -> None:
    from retrieval_pipeline.cli.render_significance import print_significance

    styles = {
        Verdict.REGRESSION: "bold red",
        Verdict.INCONCLUSIVE: "bold yellow",
        Verdict.NOT_COMPARABLE: "bold yellow",
        Verdict.PASS: "bold green",
    }
    style = styles.get(report.verdict, "bold")
    console.print(Text("Verdict: ", style="bold") + Text(report.summary, style=style))
    if not report.has_baseline or report.baseline_run_id is None or not complete:
        return
    console.print(f"Baseline: run {report.baseline_run_id}")
    if report.set_changes is not None and (report.set_changes.changed or report.set_changes.by_labels):
        console.print(report.set_changes.sentence())
    if report.verdict is Verdict.NOT_COMPARABLE:
        return
    if report.p95_latency_delta_ms is not None:
        console.print(f"p95 latency: {signed(report.p95_latency_delta_ms)} ms against the baseline")
    console.print(f"Flipped hit → miss ({len(report.flipped_to_miss)}): {id_sequence(report.flipped_to_miss)}")
    console.print(f"Flipped miss → hit ({len(report.flipped_to_hit)}): {id_sequence(report.flipped_to_hit)}")
    console.print(
        f"Paired exact McNemar test against the baseline: top-1 {p_phrase(report.top1_p_value)}, "
        f"top-3 {p_phrase(report.top3_p_value)}"
    )
    print_significance(console, report)
