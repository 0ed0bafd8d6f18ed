"""Paired slice tests as rows, one serialisation for the JSON, the terminal and the Dagster table, and the
sentences that say which differences survive Holm's correction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval_pipeline.core.base.formatting import as_written, p_value
from retrieval_pipeline.core.scoring import measures
from retrieval_pipeline.core.scoring.measures import HIT_RATE, Figure
from retrieval_pipeline.core.scoring.stats.slice_tests import OVERALL, SliceTest


@dataclass(frozen=True)
class SliceRow:
    """One test of the second run against the first (the reference or the baseline) on one slice."""

    test: SliceTest
    figure: Figure
    """The measure at the test's cut-off: the figure the test compares."""
    survives: bool
    """The corrected p-value is at or below the comparison's significance level."""

    @property
    def name(self) -> str:
        """ "overall", "form gap", "hard class near-duplicate"."""
        test = self.test
        return OVERALL if test.slice == OVERALL else f"{test.slice.replace('_', ' ')} {test.key}"

    @property
    def delta_text(self) -> str:
        return self.figure.change_text(self.test.delta)

    @property
    def test_name(self) -> str:
        """The exact McNemar test (hit rates) or the paired randomization test (ranking measures)."""
        return "McNemar" if self.test.measure == HIT_RATE.name else "randomization"

    @property
    def interval_text(self) -> str:
        """The delta's 95% bootstrap interval ("-0.050 to +0.010"), or "—" where the test has none."""
        if self.test.interval is None:
            return "—"
        low, high = self.test.interval
        return f"{self.figure.change_text(low)} to {self.figure.change_text(high)}"

    @property
    def p_text(self) -> str:
        return p_value(self.test.p_value)

    @property
    def corrected_text(self) -> str:
        return p_value(self.test.corrected_p_value)

    @property
    def cells(self) -> dict[str, str | int | bool]:
        """The row as a person reads it in a browser (the Dagster UI's `slice_tests`): each figure as text."""
        test = self.test
        return {
            "slice": test.slice,
            "key": test.key,
            "measure": self.figure.key,
            "k": test.k,
            "questions": test.questions,
            "change": self.delta_text,
            "delta_95_ci": self.interval_text,
            "p_value": self.p_text,
            "corrected_p_value": self.corrected_text,
            "survives": self.survives,
        }


@dataclass(frozen=True)
class SliceTests:
    """One family of tests, corrected together, and the level a difference must reach to survive."""

    rows: tuple[SliceRow, ...]
    significance: float

    @property
    def significance_text(self) -> str:
        return as_written(self.significance)

    @property
    def surviving(self) -> tuple[SliceRow, ...]:
        return tuple(row for row in self.rows if row.survives)

    @property
    def overall(self) -> tuple[SliceRow, ...]:
        return tuple(row for row in self.rows if row.test.slice == OVERALL)

    @property
    def paired_questions(self) -> int:
        """The questions both runs answered and the tests paired (the overall slice's)."""
        return self.rows[0].test.questions if self.rows else 0

    @property
    def surviving_sentence(self) -> str:
        """Which differences survive the correction: what a reader needs before any table."""
        level, count = self.significance_text, len(self.rows)
        if not self.surviving:
            return f"No difference survives Holm correction at {level} over {count} tests."
        listed = ", ".join(f"{row.name} {row.figure.title} {row.delta_text}" for row in self.surviving)
        return f"Surviving Holm correction at {level} over {count} tests: {listed}."


def slice_tests(tests: Sequence[SliceTest], significance: float) -> SliceTests:
    return SliceTests(
        tuple(SliceRow(test, Figure(measures.MEASURES[test.measure], test.k), test.survives(significance)) for test in tests),
        significance,
    )
