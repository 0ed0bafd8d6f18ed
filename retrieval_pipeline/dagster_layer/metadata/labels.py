"""The metadata about a set's labels: the `labels_exist` check, the label audit, and a machine judge's pass
over a judging file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from retrieval_pipeline.core.base.formatting import percent
from retrieval_pipeline.core.scoring.measures import HIT_RATE, TESTED, Figure
from retrieval_pipeline.core.services.labels.audit import AuditReport
from retrieval_pipeline.core.services.labels.label_audit import OPTIMISTIC, Finding
from retrieval_pipeline.core.services.labels.machine_judging import JudgingSummary
from retrieval_pipeline.dagster_layer.metadata.values import Column, Link, Table, plotted, table

MAX_ROWS = 200

FINDINGS_COLUMNS = (
    Column("severity", "string"),
    Column("kind", "string"),
    Column("question_id", "string"),
    Column("what_is_wrong", "string"),
)
OPTIMISTIC_COLUMNS = (
    Column("retriever", "string"),
    *[
        column
        for number, figure in enumerate(TESTED)
        for column in (
            Column(figure.key, "string"),
            Column(OPTIMISTIC + figure.key, "string", description=None if number else "If every candidate were relevant"),
        )
    ],
)


def labels_check_metadata(corpora: tuple[str, ...], findings: list[Finding]) -> dict[str, Any]:
    return {"corpora": list(corpora), "missing_label_count": len(findings), "missing_labels": _findings_table(findings)}


def labels_check_description(corpora: tuple[str, ...], findings: list[Finding]) -> str:
    if not findings:
        return f"Every label is in {len(corpora)} known corpora."
    first = findings[0]
    return (
        f"{len(findings)} label(s) name documents no corpus holds, e.g. question '{first.question_id}': "
        f"'{first.as_dict()['document_id']}'."
    )


def audit_metadata(report: AuditReport) -> dict[str, Any]:
    counts = dict(Counter(finding.kind for finding in report.findings))
    metadata: dict[str, Any] = {
        "finding_count": len(report.findings),
        "suspect_label_count": counts.get("suspect_label", 0),
        "unstable_question_count": counts.get("unstable_question", 0),
        "findings_by_kind": counts,
        "retrievers": list(report.retrievers),
        "corpora": list(report.corpora),
    }
    if report.power is not None:
        metadata["power"] = report.power.sentence
        for cutoff in report.power.cutoffs:
            if cutoff.detectable_drop is not None:
                metadata[f"{Figure(HIT_RATE, cutoff.k).key}_detectable_drop"] = plotted(cutoff.detectable_drop)
            if cutoff.questions_needed is not None:
                metadata[f"{Figure(HIT_RATE, cutoff.k).key}_questions_needed"] = cutoff.questions_needed
    if report.findings:
        metadata["findings"] = _findings_table(list(report.findings))
    if report.optimistic_rates:
        texts = {
            name: {p + f.key: percent(rates[p + f.column]) for f in TESTED for p in ("", OPTIMISTIC)}
            for name, rates in report.optimistic_rates.items()
        }
        metadata["optimistic_rates"] = table(OPTIMISTIC_COLUMNS, ({"retriever": name, **row} for name, row in texts.items()))
    return metadata


def _findings_table(findings: list[Finding]) -> Table:
    rows = (
        {"severity": f.severity, "kind": f.kind, "question_id": f.question_id or "-", "what_is_wrong": f.message}
        for f in findings[:MAX_ROWS]
    )
    return table(FINDINGS_COLUMNS, rows)


def judging_metadata(summary: JudgingSummary, path: Path, judge_name: str) -> dict[str, Any]:
    """Counts, the share answered yes, and the pass's cost (tokens) and speed: never a judged text."""
    document = summary.to_dict()
    yes_share = summary.yes / summary.judged if summary.judged else None
    return {
        "file": Link(str(path)),
        "judge": judge_name,
        "judged_by": summary.judged_by,
        "rows": summary.rows,
        "rows_judged": summary.judged,
        "asked": document["asked"],
        "from_cache": document["from_cache"],
        "errors": document["errors"],
        "yes_share": plotted(yes_share),
        "tokens_per_1000_rows": plotted(document["tokens_per_1000_rows"]),
        "rows_per_second": plotted(document["rows_per_second"] or None),
    }
