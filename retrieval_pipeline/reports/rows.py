"""The rows both report formats show (Markdown and HTML), as text: computed once, laid out twice."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval_pipeline.core.base.formatting import interval_text, percent, rate_with_counts, signed, signed_pp
from retrieval_pipeline.core.scoring.change_breakdown import GroupDelta
from retrieval_pipeline.core.scoring.regression import Verdict
from retrieval_pipeline.core.scoring.results import GroupRates, QuestionResult
from retrieval_pipeline.core.services.evaluation import Evaluation


@dataclass(frozen=True)
class RateRow:
    metric: str
    now: str
    baseline: str
    change: str


@dataclass(frozen=True)
class GroupRow:
    group: str
    questions: int
    top1: str
    top1_change: str
    top3: str
    top3_change: str


def verdict_label(evaluation: Evaluation) -> str:
    """The check's outcome in capitals, for a reader to scan for: PASS, REGRESSION, BASELINE, ..."""
    return evaluation.report.verdict.value.replace("_", " ").upper()


def set_change_line(evaluation: Evaluation) -> str | None:
    """What the comparison left out when the golden set was edited since the baseline; None otherwise."""
    changes = evaluation.report.set_changes
    return changes.sentence() if changes is not None and (changes.changed or changes.by_labels) else None


def compared(evaluation: Evaluation) -> bool:
    """The run was judged against its baseline: not incomplete, not a first run, not too different a set."""
    return evaluation.report.verdict in (Verdict.PASS, Verdict.REGRESSION)


def rate_rows(evaluation: Evaluation) -> list[RateRow]:
    """Every cut-off of the run, then p95 latency; the baseline's figures and the change where it has them."""
    run, baseline = evaluation.run, evaluation.baseline
    report, unchanged = evaluation.report, set_change_line(evaluation) is None
    checked = {1: report.top1_delta, 3: report.top3_delta}  # on the unchanged questions, as the check saw them
    rows, intervals = [], run.intervals()
    for k in run.cutoffs:
        has = baseline is not None and k in baseline.cutoffs
        if not (has and compared(evaluation)):
            change = "—"
        elif k in checked:
            change = signed_pp(checked[k])
        else:
            change = signed_pp(run.hit_rate(k) - baseline.hit_rate(k)) if unchanged else "—"
        rows.append(
            RateRow(
                f"top-{k} hit rate",
                rate_with_counts(run.hit_count(k), run.question_count, run.hit_rate(k))
                + (f", {interval_text(intervals[f'top{k}'])}" if f"top{k}" in intervals else ""),
                percent(baseline.hit_rate(k)) if has else "—",
                change,
            )
        )
    before = baseline.metrics() if baseline is not None else {}
    for name, value in run.metrics().items():
        if name.startswith(("mrr@", "ndcg@")):
            then = before.get(name)
            change = f"{value - then:+.3f}" if then is not None and compared(evaluation) and unchanged else "—"
            rows.append(
                RateRow(
                    name.replace("mrr", "MRR").replace("ndcg", "nDCG"),
                    f"{value:.3f}",
                    "—" if then is None else f"{then:.3f}",
                    change,
                )
            )
    for label, key in (("p95 latency", "p95"), ("mean latency (batches)", "batch_mean")):
        now = run.latency_summary().get(key)
        then = baseline.latency_summary().get(key) if baseline is not None else None
        if now is not None:
            change = f"{signed(now - then)} ms" if then is not None and compared(evaluation) else "—"
            rows.append(RateRow(label, f"{now:.1f} ms", "—" if then is None else f"{then:.1f} ms", change))
    return rows


def group_rows(groups: dict[str, GroupRates], deltas: tuple[GroupDelta, ...]) -> list[GroupRow]:
    by_key = {delta.key: delta for delta in deltas}
    return [
        GroupRow(
            key,
            rates.questions,
            percent(rates.top1_hit_rate),
            signed_pp(by_key[key].top1_delta) if key in by_key else "—",
            percent(rates.top3_hit_rate),
            signed_pp(by_key[key].top3_delta) if key in by_key else "—",
        )
        for key, rates in groups.items()
    ]


def breakdowns(evaluation: Evaluation) -> list[tuple[str, list[GroupRow]]]:
    """(title, rows) for each breakdown the run has; deltas only when the run was compared."""
    run, report = evaluation.run, evaluation.report
    with_deltas = compared(evaluation)
    found = [
        ("By form", run.by_form(), report.by_form),
        ("By hard class", run.by_hard_class(), report.by_hard_class),
    ]
    return [(title, group_rows(groups, deltas if with_deltas else ())) for title, groups, deltas in found if groups]


def outcome(question: QuestionResult) -> str:
    if question.error is not None:
        return "error"
    return "top-1 hit" if question.top1_hit else "top-3 hit" if question.top3_hit else "miss"


def misses_first(questions: Sequence[QuestionResult]) -> list[QuestionResult]:
    """Errors, then top-3 misses, then top-1 misses, then hits; the set's order inside each."""
    rank = {"error": 0, "miss": 1, "top-3 hit": 2, "top-1 hit": 3}
    return sorted(questions, key=lambda q: rank[outcome(q)])
