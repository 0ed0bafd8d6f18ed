"""Retrievers side by side on one set: rates per group, the questions they disagree on, paired tests.

Pure functions over finished runs, so the command line and the Dagster UI show the same figures. Every
run is tested against the first with the exact McNemar test (only the questions where exactly one of
the two hit), overall and per form, hard class and turn depth, Holm-corrected over each pair's slices and cut-offs:
on a small set one question is several points, and the p-value tells a team whether a difference could
be noise. Runs that measured different versions of the set are compared on the questions unchanged in
all of them (set_versions.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.scoring.results import GroupRates, QuestionResult, RunResult
from retrieval_pipeline.core.scoring.set_versions import SetChanges, restrict, unchanged_across
from retrieval_pipeline.core.scoring.slices import FORM, HARD_CLASS, SLICES, TURN_DEPTH
from retrieval_pipeline.core.scoring.stats.intervals import DEFAULT_SIGNIFICANCE
from retrieval_pipeline.core.scoring.stats.slice_tests import TESTED_CUTOFFS, SliceTest, overall_test, paired_slice_tests

COMPARED_CUTOFFS = TESTED_CUTOFFS


@dataclass(frozen=True)
class GroupComparison:
    """One form, hard class or turn depth; `rates` holds one entry per run (None: the group is absent from that run)."""

    key: str
    rates: tuple[GroupRates | None, ...]


@dataclass(frozen=True)
class Disagreement:
    """A question whose hits differ between runs at some compared cut-off; one outcome per run."""

    question_id: str
    form: str
    hard_class: str | None
    expected_document_ids: tuple[str, ...]
    outcomes: tuple[QuestionResult, ...]

    def hits(self, k: int) -> tuple[bool | None, ...]:
        return tuple(outcome.hit_at(k) for outcome in self.outcomes)


@dataclass(frozen=True)
class Comparison:
    set_identifier: str
    runs: tuple[RunResult, ...]
    by_slice: tuple[tuple[str, tuple[GroupComparison, ...]], ...]
    """(slice name, its keys side by side) for every declared slice (slices.SLICES), in their order."""
    disagreements: tuple[Disagreement, ...]
    slice_tests: tuple[tuple[SliceTest, ...], ...]
    """For each run after the reference, its tests against the reference (first = the reference)."""
    significance: float = DEFAULT_SIGNIFICANCE
    """The level at which a corrected difference is said to survive."""
    set_changes: tuple[SetChanges, ...] = ()
    """One per run after the reference: its set edits against the reference's questions."""

    def groups_by(self, name: str) -> tuple[GroupComparison, ...]:
        return dict(self.by_slice).get(name, ())

    @property
    def by_form(self) -> tuple[GroupComparison, ...]:
        return self.groups_by(FORM.name)

    @property
    def by_hard_class(self) -> tuple[GroupComparison, ...]:
        return self.groups_by(HARD_CLASS.name)

    @property
    def by_turn_depth(self) -> tuple[GroupComparison, ...]:
        return self.groups_by(TURN_DEPTH.name)

    @property
    def reference(self) -> RunResult:
        return self.runs[0]

    @property
    def retriever_identifiers(self) -> tuple[str, ...]:
        return tuple(run.retriever_identifier for run in self.runs)

    def tests_of(self, other: str) -> tuple[SliceTest, ...]:
        """Every slice test of `other` against the reference (none for the reference itself)."""
        others = self.retriever_identifiers[1:]
        return self.slice_tests[others.index(other)] if other in others else ()

    def test(self, other: str, k: int) -> SliceTest | None:
        """The overall paired test of `other` against the reference at `k` (None for the reference itself)."""
        return overall_test(self.tests_of(other), k)


def compare_runs(
    runs: Sequence[RunResult],
    cutoffs: Sequence[int] = COMPARED_CUTOFFS,
    min_compared_questions: int = 1,
    significance: float = DEFAULT_SIGNIFICANCE,
) -> Comparison:
    """Compare runs of distinct retrievers on the same set; the first run is the reference. `runs` of the
    result are the given runs restricted to their unchanged questions."""
    runs = tuple(runs)
    _check_comparable(runs)
    changes, common = unchanged_across(runs[0], runs[1:])
    if len(common) < min_compared_questions:
        edits = "; ".join(f"{run.retriever_identifier}: {c.sentence()}" for run, c in zip(runs[1:], changes))
        raise InvalidInputError(
            f"not comparable: the runs share only {len(common)} unchanged question(s) of set "
            f"'{runs[0].set_identifier}' (minimum {min_compared_questions}). {edits}"
        )
    runs = tuple(restrict(run, common) for run in runs)
    return Comparison(
        set_identifier=runs[0].set_identifier,
        runs=runs,
        by_slice=tuple((s.name, group_comparisons([run.breakdown(s.name) for run in runs])) for s in SLICES),
        disagreements=disagreements(runs, cutoffs),
        slice_tests=tuple(paired_slice_tests(runs[0], other, cutoffs) for other in runs[1:]),
        significance=significance,
        set_changes=changes,
    )


def _check_comparable(runs: tuple[RunResult, ...]) -> None:
    if len(runs) < 2:
        raise InvalidInputError("a comparison needs at least two runs")
    identifiers = [run.retriever_identifier for run in runs]
    repeated = next((i for i in identifiers if identifiers.count(i) > 1), None)
    if repeated is not None:
        raise InvalidInputError(f"retriever '{repeated}' is given more than once")
    reference = runs[0]
    for run in runs[1:]:
        if run.set_identifier != reference.set_identifier:
            raise InvalidInputError(
                f"runs of different sets cannot be compared: '{reference.set_identifier}' and '{run.set_identifier}'"
            )


def group_comparisons(breakdowns: Sequence[dict[str, GroupRates]]) -> tuple[GroupComparison, ...]:
    """Keys in first-seen order across the runs."""
    keys = list(dict.fromkeys(key for breakdown in breakdowns for key in breakdown))
    return tuple(GroupComparison(key, tuple(breakdown.get(key) for breakdown in breakdowns)) for key in keys)


def disagreements(runs: Sequence[RunResult], cutoffs: Sequence[int] = COMPARED_CUTOFFS) -> tuple[Disagreement, ...]:
    """Questions, in set order, on which the runs do not all agree (an error disagrees with any hit or miss)."""
    import numpy as np

    differ = np.zeros(runs[0].question_count, bool)
    for k in cutoffs:
        outcomes = [np.where(run.questions.answered, run.questions.hits(k), 2) for run in runs]
        for other in outcomes[1:]:
            differ |= other != outcomes[0]
    found = []
    for position in np.flatnonzero(differ).tolist():
        first = runs[0].questions[position]
        outcomes = tuple(run.questions[position] for run in runs)
        found.append(Disagreement(first.question_id, first.form, first.hard_class, first.expected_document_ids, outcomes))
    return tuple(found)
