"""A log's coverage by a set as every output lays it out: the terminal tables, `coverage --json` and the
Dagster metadata. Counts and shares only; example queries only where the log says `examples: true`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from retrieval_pipeline.core.services.traffic.coverage import Coverage

EXAMPLES_SHOWN = 3


def _share(part: int | None, whole: int) -> float | None:
    return part / whole if part is not None and whole else None


@dataclass(frozen=True)
class QuestionTraffic:
    question_id: str
    traffic: int
    share: float | None


@dataclass(frozen=True)
class ClusterRow:
    rank: int
    traffic: int
    distinct: int
    share: float | None
    examples: tuple[str, ...]
    """Its most asked queries, up to EXAMPLES_SHOWN; empty unless the log allows examples."""


@dataclass(frozen=True)
class CoverageView:
    set_identifier: str
    log: str
    method: str
    threshold: float
    total: int
    covered: int
    distinct: int
    covered_distinct: int
    lines: int
    bad_lines: int
    blank_lines: int
    first_timestamp: str | None
    last_timestamp: str | None
    questions: tuple[QuestionTraffic, ...]
    clusters: tuple[ClusterRow, ...]
    match_traffic: int | None
    examples: bool

    @property
    def covered_share(self) -> float | None:
        return _share(self.covered, self.total)

    @property
    def distinct_share(self) -> float | None:
        return _share(self.covered_distinct, self.distinct)

    @property
    def match_share(self) -> float | None:
        """Of the covered traffic, the share that reads as MATCH (shares words with its question's documents)."""
        return _share(self.match_traffic, self.covered)

    @property
    def gap_share(self) -> float | None:
        return None if self.match_share is None else 1.0 - self.match_share

    @property
    def unassigned_questions(self) -> tuple[str, ...]:
        return tuple(row.question_id for row in self.questions if row.traffic == 0)

    @property
    def asked_questions(self) -> tuple[QuestionTraffic, ...]:
        """The questions with traffic, most asked first (ties in the set's order)."""
        return tuple(sorted((row for row in self.questions if row.traffic), key=lambda row: -row.traffic))

    def to_dict(self) -> dict[str, Any]:
        """The `retrieval-eval coverage --json` document."""
        return {
            "set": self.set_identifier,
            "log": self.log,
            "method": self.method,
            "threshold": self.threshold,
            "traffic": {"total": self.total, "covered": self.covered, "covered_share": self.covered_share},
            "distinct": {"total": self.distinct, "covered": self.covered_distinct, "covered_share": self.distinct_share},
            "lines": {"read": self.lines, "bad": self.bad_lines, "blank": self.blank_lines},
            "timestamps": {"first": self.first_timestamp, "last": self.last_timestamp},
            "covered_forms": {"match_share": self.match_share, "gap_share": self.gap_share},
            "questions": [{"id": q.question_id, "traffic": q.traffic, "share": q.share} for q in self.questions],
            "uncovered_clusters": [
                {"rank": c.rank, "traffic": c.traffic, "distinct": c.distinct, "share": c.share}
                | ({"examples": list(c.examples)} if self.examples else {})
                for c in self.clusters
            ],
            "examples": self.examples,
        }


def coverage_view(coverage: Coverage, set_identifier: str, log: str) -> CoverageView:
    total = coverage.assignment.total
    log_counts = coverage.log
    return CoverageView(
        set_identifier=set_identifier,
        log=log,
        method=coverage.method,
        threshold=coverage.threshold,
        total=total,
        covered=coverage.assignment.covered,
        distinct=log_counts.distinct,
        covered_distinct=coverage.covered_distinct,
        lines=log_counts.lines,
        bad_lines=log_counts.bad_lines,
        blank_lines=log_counts.blank_lines,
        first_timestamp=log_counts.first_timestamp,
        last_timestamp=log_counts.last_timestamp,
        questions=tuple(
            QuestionTraffic(question_id, traffic, _share(traffic, total))
            for question_id, traffic in coverage.assignment.by_question.items()
        ),
        clusters=tuple(
            ClusterRow(
                rank,
                cluster.traffic,
                cluster.distinct,
                _share(cluster.traffic, total),
                tuple(query for query, _ in cluster.top[:EXAMPLES_SHOWN]) if log_counts.examples else (),
            )
            for rank, cluster in enumerate(coverage.clusters, start=1)
        ),
        match_traffic=coverage.match_traffic,
        examples=log_counts.examples,
    )
