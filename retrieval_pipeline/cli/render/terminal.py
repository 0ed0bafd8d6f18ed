"""Rich tables and lines for people: the core's views laid out, nothing computed or chosen here."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from retrieval_pipeline.cli.render.fitted_tables import Column, print_fitted
from retrieval_pipeline.core.base.formatting import id_list, p_phrase
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
from retrieval_pipeline.core.services.views.breakdowns import Breakdown
from retrieval_pipeline.core.services.views.evaluation_view import EvaluationView
from retrieval_pipeline.core.services.views.figure_rows import FigureRow
from retrieval_pipeline.core.services.views.run_view import RunView
from retrieval_pipeline.core.services.views.traffic_view import TrafficView

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
    deepest = TESTED[-1]
    misses = list(run.questions.take(np.flatnonzero(~run.questions.hits(deepest.k))))
    note = f"{len(misses)} of {run.question_count} questions shown: {deepest.title} misses and errors (--show all lists every question)."
    return misses, note


def print_questions(console: Console, questions: Sequence[QuestionResult]) -> None:
    """One row per question; `hit rank` is where the first expected document came (up to the deepest
    cut-off). A narrow terminal leaves out the latency, then the hit rank."""
    with_errors = any(question.error is not None for question in questions)
    with_queries = any(question.query is not None for question in questions)
    columns = [
        Column("id", "left", identifier=True),
        Column("form", "left", identifier=True),
        Column("class", "left", identifier=True),
        *(Column(figure.title, "center") for figure in TESTED),
        Column("hit rank", optional=1),
        Column("retrieved", "left"),
        Column("expected", "left"),
        Column("ms", optional=2),
    ]
    if with_queries:  # a turn asked with its history or a rewrite (query_modes.py)
        columns.append(Column("asked as", "left"))
    if with_errors:
        columns.append(Column("error", "left"))
    rows = []
    for question in questions:
        answered = question.error is None
        row = [
            question.question_id,
            question.form,
            question.hard_class or "",
            *(hit_mark(question.hit_at(figure.k)) for figure in TESTED),
            hit_rank_cell(question) if answered else "",
            retrieved_text(question) if answered else Text(""),
            id_list(question.expected_document_ids) if question.expected_document_ids else "(none)",
            f"{question.latency_ms:.1f}" if answered else "",
        ]
        asked_as = [Text(question.query or "", style="dim")] if with_queries else []
        rows.append([*row, *asked_as, *([Text(question.error or "", style="red")] if with_errors else [])])
    print_fitted(console, "Questions", columns, rows)


def rate_lines(view: RunView) -> list[str]:
    return [f"{row.name[:1].upper()}{row.name[1:]}: {row.now_text}" for row in view.rates]


def traffic_lines(view: TrafficView | None) -> list[str]:
    """The traffic-weighted headline figures, with their change where the check measured one; none
    without a traffic log."""
    if view is None:
        return []
    changed = (f" ({row.change_text} against the baseline)" if row.change is not None else "" for row in view.headline)
    return [view.sentence, *(f"  Weighted {row.name}: {row.now_text}{change}" for row, change in zip(view.headline, changed))]


def metrics_line(view: RunView) -> str:
    return "Ranking: " + " · ".join(f"{row.title} {row.text}" for row in view.listed_ranking)


def latency_text(view: RunView) -> str | None:
    """Percentiles when each question was timed; the batch mean, named as such, when questions were timed in batches."""
    if not view.latency:
        return None
    batched = next((row for row in view.latency if row.batched), None)
    if batched is not None:
        return f"batch mean {batched.text} per question (timed in batches: no percentiles)"
    return " · ".join(f"{row.statistic} {row.text}" for row in view.latency)


def latency_line(view: RunView) -> str | None:
    text = latency_text(view)
    return None if text is None else f"Latency: {text}"


def print_approximation(console: Console, run: RunResult, who: str = "Search") -> None:
    """An approximate search's statement (`who`: the retriever, in a comparison); nothing for an exact one."""
    if run.approximation is not None:
        console.print(Text(f"{who}: {run.approximation.sentence}", style="bold yellow"))


def print_breakdown(console: Console, breakdown: Breakdown) -> None:
    """Rates per key and the headline ranking figures; where the check compared the groups, its changes too.
    A narrow terminal leaves out the ranking figures (from the right), then the question counts."""
    columns = [Column(breakdown.label, "left", identifier=True), Column("questions", optional=1)]
    columns += [Column(figure.title) for figure in breakdown.figures]
    columns += [Column(row.title, optional=2) for row in breakdown.rows[0].headline_scores]
    if breakdown.changes:
        columns += [Column(f"Δ {figure.title}") for figure in breakdown.figures]
    rows = []
    for row in breakdown.rows:
        cells: list[str | Text] = [row.key, str(row.questions), *(cell.text for cell in (*row.rates, *row.headline_scores))]
        if breakdown.changes:
            cells += [_change_cell(cell) for cell in row.rates]
        rows.append(cells)
    print_fitted(console, breakdown.title, columns, rows)


def _change_cell(row: FigureRow) -> Text:
    delta = row.checked
    style = "" if delta is None or abs(delta) < 1e-12 else ("green" if delta > 0 else "red")
    return Text(row.checked_text, style=style)


VERDICT_STYLES = {
    "regression": "bold red",
    "inconclusive": "bold yellow",
    "not_comparable": "bold yellow",
    "pass": "bold green",
}


def print_regression(console: Console, view: EvaluationView) -> None:
    from retrieval_pipeline.cli.render.significance import print_significance

    verdict = view.verdict
    console.print(Text("Verdict: ", style="bold") + Text(verdict.sentence, style=VERDICT_STYLES.get(verdict.status, "bold")))
    if not verdict.has_baseline or verdict.baseline_run_id is None or not view.run.result.complete:
        return
    console.print(f"Baseline: run {verdict.baseline_run_id}")
    if view.set_change_line is not None:
        console.print(view.set_change_line)
    if not verdict.paired:
        return
    if view.latency_change is not None:
        console.print(f"p95 latency: {view.latency_change_text} against the baseline")
    console.print(f"Flipped hit → miss ({view.lost_hits_count}): {id_sequence(view.flipped_to_miss)}")
    console.print(f"Flipped miss → hit ({len(view.flipped_to_hit)}): {id_sequence(view.flipped_to_hit)}")
    tested = ", ".join(f"{row.title} {p_phrase(row.p_value)}" for row in view.run.tested)
    console.print(f"Paired exact McNemar test against the baseline: {tested}")
    print_significance(console, view)
