"""Tolerances: what a team accepts as a change, and the one rule a drop is held to them by.

A tolerance is user input that can switch a gate off without a word (`10` meant as 10 points, infinity,
NaN), so it is refused where it is declared, before anything runs or is saved; the configuration file
and the command-line options ask `tolerance_problem` before building one, so their errors name the key
or option. The drop rule lives here too: the check and the history chart must hold a drop to a
tolerance by the same exact rule.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Mapping
from dataclasses import Field, dataclass, field, fields
from fractions import Fraction

from retrieval_pipeline.core.scoring.measures import HIT_RATE, gated_figures
from retrieval_pipeline.core.scoring.results import RunResult

DEFAULT_MAX_DROP = 0.1
DEFAULT_MIN_COMPARED_QUESTIONS = 1

FRACTION, MILLISECONDS, COUNT, LEVEL, SWITCH = "fraction", "milliseconds", "count", "level", "switch"
"""Units of tolerance fields, declared as `field(metadata={"unit": ...})`; a field without one is a fraction.
A level is a fraction strictly between 0 and 1 (a significance level of 0 or 1 decides nothing); a switch
is true or false, and says how the others are applied."""


def tolerance_problem(name: str, value: object, unit: str | None = None) -> str | None:
    """Why `value` cannot be the tolerance `name` (of `unit`, else the unit its Tolerances field declares), or None.

    A fraction (the default, so a rate tolerance added later is covered) lies in [0, 1]: above 1 it can
    never be exceeded and infinity or NaN never compare, so each would silently switch the gate off, and
    `10` is almost always 10 percentage points meant as 0.10. Milliseconds are finite and >= 0; a count
    is a whole number >= 1.
    """
    if value is None:
        return None
    unit = unit or _UNITS.get(name, FRACTION)
    if unit == SWITCH:
        return None if isinstance(value, bool) else f"must be true or false, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be a number, got {type(value).__name__}"
    if unit == COUNT:
        return None if isinstance(value, int) and value >= 1 else f"must be a whole number >= 1, got {value!r}"
    if unit == MILLISECONDS:
        return None if math.isfinite(value) and value >= 0 else f"must be a finite number of milliseconds >= 0, got {value}"
    if math.isfinite(value) and 0 <= value <= 1:
        return f"must lie strictly between 0 and 1, got {value!r}" if unit == LEVEL and value in (0, 1) else None
    hint = ""
    if math.isfinite(value) and 1 < value <= 100:
        hint = f"; did you mean {value / 100:.2f}?" if value == int(value) else f"; did you mean {value / 100:g}?"
    return f"must be a fraction from 0 to 1 (0.1 = 10 pp), got {value:g}{hint}"


@dataclass(frozen=True)
class Tolerances:
    """Largest changes accepted: drops absolute on the 0..1 scale, latency in ms; checked on construction,
    so a tolerance that would switch the gate off is refused before anything runs or is saved."""

    max_top1_drop: float = DEFAULT_MAX_DROP
    max_top3_drop: float = DEFAULT_MAX_DROP
    max_p95_latency_increase_ms: float | None = field(default=None, metadata={"unit": MILLISECONDS})
    min_compared_questions: int = field(default=DEFAULT_MIN_COMPARED_QUESTIONS, metadata={"unit": COUNT})
    """Fewer unchanged questions in common with the baseline than this: not comparable, not judged."""
    max_mrr_drop: float | None = None
    max_ndcg_drop: float | None = None
    max_recall_drop: float | None = None
    min_significance: float | None = field(default=None, metadata={"unit": LEVEL})
    """When set, a hit-rate drop beyond tolerance whose Holm-corrected p-value is above it is inconclusive."""
    max_unjudged_share: float | None = None
    """When set, a drop beyond tolerance where more of the lost hits than this share have unjudged
    documents in their new top k is inconclusive: the labels, not the retriever, are in doubt."""
    weighted: bool = field(default=False, metadata={"unit": SWITCH})
    """When true, the top-1 and top-3 drop tolerances gate the traffic-weighted hit rates of a set that
    names a traffic log (traffic.py) instead of the plain ones; a set without one is gated as before."""

    def __post_init__(self) -> None:
        for tolerance in fields(self):
            problem = tolerance_problem(tolerance.name, getattr(self, tolerance.name), tolerance.metadata.get("unit", FRACTION))
            if problem:
                raise ValueError(f"{tolerance.name} {problem}")

    def as_dict(self) -> dict[str, float | int | bool | None]:
        """The tolerances as the JSON document and the stored run state them; the `weighted` switch only
        when on, so the records of projects that never weigh by traffic stay as they were."""
        written = dataclasses.asdict(self)
        if not self.weighted:
            del written["weighted"]
        return written


_UNITS = {tolerance.name: tolerance.metadata.get("unit", FRACTION) for tolerance in fields(Tolerances)}


def tolerance_fields() -> list[tuple[Field, type]]:
    """Each tolerance with its type: what the configuration's `tolerances` section is made of."""
    hints = typing.get_type_hints(Tolerances)
    return [(tolerance, hints[tolerance.name]) for tolerance in fields(Tolerances)]


def hit_rate_gates(tolerances: Tolerances, cutoffs: tuple[int, ...]) -> list[tuple[int, float]]:
    """(cut-off, tolerance) for every hit rate a tolerance option gates, as the hit-rate measure declares."""
    return [(figure.k, getattr(tolerances, option)) for figure, option in gated_figures(cutoffs) if figure.measure is HIT_RATE]


def dropped_hit_rates(counts: Mapping[int, tuple[tuple[int, int], tuple[int, int]]], tolerances: Tolerances) -> list[int]:
    """The cut-offs whose gated hit rate dropped beyond its tolerance, from (before, after) counts of
    (hits, questions) by cut-off: the check's exact rule, for runs known only by their stored counts."""
    return [k for k, tolerance in hit_rate_gates(tolerances, tuple(counts)) if exceeds(count_drop(*counts[k]), tolerance)]


def exact_drop(baseline: RunResult, current: RunResult, k: int) -> Fraction:
    """Rates are ratios of counts; comparing them exactly keeps 0.8 - 0.7 from exceeding 0.1."""
    return count_drop((baseline.hit_count(k), baseline.question_count), (current.hit_count(k), current.question_count))


def count_drop(before: tuple[int, int], after: tuple[int, int]) -> Fraction:
    """A drop from (hits, questions) counts, so stored summaries are judged as exactly as whole runs."""
    return _ratio(*before) - _ratio(*after)


def exceeds(drop: Fraction, tolerance: float) -> bool:
    """Strictly greater: a drop equal to the tolerance, as the user wrote it in decimal, is accepted."""
    return drop > Fraction(repr(float(tolerance)))


def _ratio(hits: int, questions: int) -> Fraction:
    return Fraction(hits, questions) if questions else Fraction(0)
