"""Tolerances: what a team accepts as a change, declared once as one validated model, and the exact
rule a drop is held to them by.

A tolerance is user input that can switch a gate off without a word (`10` meant as 10 points, infinity,
NaN), so it is refused where it is written, before anything runs or is saved. `Tolerances` is the
configuration's `tolerances` section itself, the command line's options ask `tolerance_problem` before
anything is loaded, and a stored run records the model's own fields; so each error names the key or
option. A measure names the field that gates it (measures.py). The drop rule lives here too: the check
and the history chart must hold a drop to a tolerance by the same exact rule.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from retrieval_pipeline.core.base.errors import InvalidInputError, validation_problem

DEFAULT_MAX_DROP = 0.1
DEFAULT_MIN_COMPARED_QUESTIONS = 1

FRACTION, MILLISECONDS, COUNT, LEVEL, SWITCH = "fraction", "milliseconds", "count", "level", "switch"
"""Units of tolerance fields, declared as `in_unit(...)`; a field without one is a fraction. A level is a
fraction strictly between 0 and 1 (a significance level of 0 or 1 decides nothing); a switch is true or
false, and says how the others are applied."""


def in_unit(unit: str, default: Any) -> Any:
    """A tolerance field read in `unit` rather than as a fraction."""
    return Field(default, json_schema_extra={"unit": unit})


def tolerance_problem(name: str, value: object, unit: str | None = None) -> str | None:
    """Why `value` cannot be the tolerance `name` (of `unit`, else the unit its Tolerances field declares), or None.

    A fraction (the default, so a rate tolerance added later is covered) lies in [0, 1]: above 1 it can
    never be exceeded and infinity or NaN never compare, so each would silently switch the gate off, and
    `10` is almost always 10 percentage points meant as 0.10. Milliseconds are finite and >= 0; a count
    is a whole number >= 1.
    """
    if value is None:
        return None
    unit = unit or _unit(Tolerances, name)
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


class Tolerances(BaseModel):
    """Largest changes accepted: drops absolute on the 0..1 scale, latency in ms; checked on construction,
    so a tolerance that would switch the gate off is refused before anything runs or is saved."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_top1_drop: float = DEFAULT_MAX_DROP
    max_top3_drop: float = DEFAULT_MAX_DROP
    max_p95_latency_increase_ms: float | None = in_unit(MILLISECONDS, None)
    min_compared_questions: int = in_unit(COUNT, DEFAULT_MIN_COMPARED_QUESTIONS)
    """Fewer unchanged questions in common with the baseline than this: not comparable, not judged."""
    max_mrr_drop: float | None = None
    max_ndcg_drop: float | None = None
    max_recall_drop: float | None = None
    min_significance: float | None = in_unit(LEVEL, None)
    """When set, a hit-rate drop beyond tolerance whose Holm-corrected p-value is above it is inconclusive."""
    max_unjudged_share: float | None = None
    """When set, a drop beyond tolerance where more of the lost hits than this share have unjudged
    documents in their new top k is inconclusive: the labels, not the retriever, are in doubt."""
    weighted: bool = in_unit(SWITCH, False)
    """When true, the top-1 and top-3 drop tolerances gate the traffic-weighted hit rates of a set that
    names a traffic log (traffic.py) instead of the plain ones; a set without one is gated as before."""

    @field_validator("*", mode="before")
    @classmethod
    def _checked(cls, value: Any, info: ValidationInfo) -> Any:
        """Before pydantic's coercion, which would turn `true` into the tolerance 1.0."""
        problem = tolerance_problem(info.field_name or "", value, _unit(cls, info.field_name or ""))
        if problem:
            raise ValueError(problem)
        return value

    def replaced(self, **changes: object) -> Tolerances:
        """These tolerances with `changes`, checked alike; a refused change is named, as an option would be."""
        try:
            return self.model_validate({**self.model_dump(), **changes})
        except ValidationError as error:
            location, message = validation_problem(error, type(self))
            raise InvalidInputError(f"{'.'.join(location)} {message}") from None

    def as_dict(self) -> dict[str, float | int | bool | None]:
        """The tolerances as the JSON document and the stored run state them; the `weighted` switch only
        when on, so the records of projects that never weigh by traffic stay as they were."""
        return self.model_dump(exclude=None if self.weighted else {"weighted"})


def _unit(model: type[BaseModel], name: str) -> str:
    declared = model.model_fields.get(name)
    extra = declared.json_schema_extra if declared is not None else None
    return str(extra.get("unit", FRACTION)) if isinstance(extra, dict) else FRACTION


def count_drop(before: tuple[int, int], after: tuple[int, int]) -> Fraction:
    """A drop from (hits, questions) counts, so stored summaries are judged as exactly as whole runs."""
    return _ratio(*before) - _ratio(*after)


def exceeds(drop: Fraction, tolerance: float) -> bool:
    """Strictly greater: a drop equal to the tolerance, as the user wrote it in decimal, is accepted."""
    return drop > Fraction(repr(float(tolerance)))


def _ratio(hits: int, questions: int) -> Fraction:
    return Fraction(hits, questions) if questions else Fraction(0)
