"""A run's traffic-weighted figures as rows beside the plain ones, shaped once for every output.

Shown only when the run was weighted by a query log (`traffic:` on the set's entry, or `--traffic`), so
every output of a project without traffic stays as it was. Each row is a `FigureRow` like the plain
ones: the weighted figure, its interval (hit rates), the baseline's under the same traffic and the
check's weighted change on the compared questions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from retrieval_pipeline.core.scoring.measures import figures
from retrieval_pipeline.core.scoring.traffic import WeightedFigures
from retrieval_pipeline.core.services.views.figure_rows import FigureRow


@dataclass(frozen=True)
class TrafficView:
    log: str
    fingerprint: str | None
    total: int
    """The traffic assigned to the run's questions."""
    effective_questions: float
    """Kish's n_eff, the sample size the weighted intervals stand on."""
    zero_traffic: tuple[str, ...]
    """The questions no traffic was assigned to: they weigh 0 in every weighted figure."""
    rows: tuple[FigureRow, ...]
    """Every declared figure, weighted."""
    cutoffs: tuple[int, ...]
    gated: bool
    """The verdict gated these rates instead of the plain ones (`tolerances.weighted`)."""

    @property
    def headline(self) -> tuple[FigureRow, ...]:
        """The rows the tables and reports show, as the plain headline figures are chosen."""
        return tuple(row for row in self.rows if row.figure.measure.headline_at(row.figure.k, self.cutoffs))

    @property
    def sentence(self) -> str:
        """ "Traffic-weighted by log 'web': 1,204 queries, 31.2 effective questions; 3 question(s) without
        traffic weigh 0.": what the weighted rows stand on (the JSON names the questions)."""
        return (
            f"Traffic-weighted by log '{self.log}': {self.total:,} queries, {self.effective_questions:.1f} effective "
            f"questions; {len(self.zero_traffic)} question(s) without traffic weigh 0"
            + ("; the verdict gated these rates." if self.gated else ".")
        )

    def to_dict(self) -> dict[str, Any]:
        """The `traffic` object of the JSON documents: the figures keyed like the plain ones."""
        return {
            "log": self.log,
            "fingerprint": self.fingerprint,
            "traffic": self.total,
            "effective_questions": self.effective_questions,
            "zero_traffic_count": len(self.zero_traffic),
            "zero_traffic_question_ids": list(self.zero_traffic),
            "figures": {row.key: row.value for row in self.rows},
            "intervals": {row.key: list(row.interval) for row in self.rows if row.interval is not None},
            "baseline": {row.key: row.baseline for row in self.rows if row.baseline is not None},
            "baseline_rescored": any(row.rescored for row in self.rows),
            "baseline_as_stored": (
                {row.key: row.stored_baseline for row in self.rows if row.stored_baseline is not None}
                if any(row.rescored for row in self.rows)
                else None
            ),
            "deltas": {row.key: row.change for row in self.rows if row.change is not None},
            "gated": self.gated,
        }


def traffic_view(
    weighted: WeightedFigures | None,
    baseline: WeightedFigures | None = None,
    deltas: Mapping[str, float] | None = None,
    gated: bool = False,
    cutoffs: tuple[int, ...] = (),
    stored: WeightedFigures | None = None,
) -> TrafficView | None:
    """None without weighted figures. `deltas`: the changes to show (the check's on the compared
    questions, or a comparison's); None shows none. `stored`: the baseline's figures as stored, when
    `baseline` is its rescoring under the current labels."""
    if weighted is None:
        return None
    rows = tuple(
        FigureRow(
            figure,
            weighted.values[figure.key],
            interval=weighted.intervals.get(figure.key),
            baseline=baseline.values.get(figure.key) if baseline is not None else None,
            change=(deltas or {}).get(figure.key),
            stored_baseline=stored.values.get(figure.key) if stored is not None else None,
            rescored=stored is not None,
        )
        for figure in figures(cutoffs)
        if figure.key in weighted.values
    )
    traffic = weighted.traffic
    return TrafficView(
        traffic.log,
        traffic.fingerprint,
        weighted.total,
        weighted.effective_questions,
        weighted.zero_traffic,
        rows,
        cutoffs,
        gated,
    )
