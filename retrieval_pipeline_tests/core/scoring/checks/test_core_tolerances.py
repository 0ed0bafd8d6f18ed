"""Tolerances that would silently switch the regression gate off (10 meant as 10 pp, infinity, NaN, a
negative drop) are refused where they are written, with a hint when a percentage was meant; the rule
covers every tolerance field, including ones added later."""

from __future__ import annotations

import json
import math

import pytest
import yaml
from pydantic import ValidationError

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.scoring.checks.tolerances import MILLISECONDS, Tolerances, in_unit, tolerance_problem
from retrieval_pipeline.core.services.configuration.project import load_config

OUT_OF_RANGE = [10, 1.5, -0.1, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("value", [0, 0.0, 0.05, 1, 1.0])
def test_a_fraction_from_0_to_1_is_a_valid_rate_tolerance(value):
    assert tolerance_problem("max_top1_drop", value) is None
    assert Tolerances(max_top1_drop=value, max_top3_drop=value).max_top1_drop == value


@pytest.mark.parametrize("value", OUT_OF_RANGE)
@pytest.mark.parametrize("name", ["max_top1_drop", "max_top3_drop"])
def test_a_rate_tolerance_outside_0_to_1_is_refused_naming_it(name, value):
    field, problem = refusal(**{name: value})
    assert field == name and problem.startswith("must be a fraction from 0 to 1 (0.1 = 10 pp), got")
    with pytest.raises(InvalidInputError, match=f"^{name} must be a fraction from 0 to 1"):
        Tolerances().replaced(**{name: value})


@pytest.mark.parametrize(("value", "meant"), [(10, "0.10"), (5, "0.05"), (2.5, "0.025"), (100, "1.00")])
def test_a_tolerance_written_in_percentage_points_gets_the_fraction_it_meant(value, meant):
    assert tolerance_problem("max_top3_drop", value).endswith(f"did you mean {meant}?")


def test_no_hint_is_guessed_for_values_no_percentage_explains():
    for value in (250, math.inf, -3):
        assert "did you mean" not in tolerance_problem("max_top1_drop", value)


@pytest.mark.parametrize("value", [math.inf, math.nan, -1])
def test_a_latency_tolerance_must_be_finite_milliseconds(value):
    field, problem = refusal(max_p95_latency_increase_ms=value)
    assert field == "max_p95_latency_increase_ms" and problem.startswith("must be a finite number of milliseconds")
    assert Tolerances(max_p95_latency_increase_ms=250).max_p95_latency_increase_ms == 250


def test_a_tolerance_field_added_later_is_checked_by_the_same_rule():
    class Grown(Tolerances):
        max_queue_share: float = 0.05
        max_queue_wait_ms: float | None = in_unit(MILLISECONDS, None)

    with pytest.raises(InvalidInputError, match="^max_queue_share must be a fraction .* did you mean 0.05"):
        Grown().replaced(max_queue_share=5)
    with pytest.raises(ValidationError, match="max_queue_wait_ms\n.*must be a finite number of milliseconds"):
        Grown(max_queue_wait_ms=math.inf)


def test_tolerances_stored_with_a_run_read_back_as_they_were_judged_with():
    judged = Tolerances(max_top1_drop=0.05, max_mrr_drop=0.02, min_significance=0.01)
    stored = json.dumps(judged.as_dict())

    assert "weighted" not in json.loads(stored)
    assert Tolerances(**json.loads(stored)) == judged
    assert Tolerances(**json.loads(json.dumps(Tolerances(weighted=True).as_dict()))).weighted is True


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("10", "got 10; did you mean 0.10?"),
        (".inf", "got inf"),
        (".nan", "got nan"),
        ("-1", "got -1"),
        ("ten", "must be a number, got str"),
        ("true", "must be a number, got bool"),
    ],
)
def test_a_bad_tolerance_in_the_configuration_names_the_file_and_key(tmp_path, written, expected):
    path = tmp_path / "config.yaml"
    path.write_text(f"tolerances:\n  max_top3_drop: {written}\n", encoding="utf-8")

    with pytest.raises(InvalidInputError) as caught:
        load_config(path)

    assert str(caught.value).startswith(f"{path}: tolerances: field 'max_top3_drop': ")
    assert expected in str(caught.value)


def test_configured_tolerances_at_the_limits_are_kept(tmp_path):
    path = tmp_path / "config.yaml"
    data = {"tolerances": {"max_top1_drop": 0, "max_top3_drop": 1, "max_p95_latency_increase_ms": 0}}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")

    assert load_config(path).tolerances == Tolerances(max_top1_drop=0, max_top3_drop=1, max_p95_latency_increase_ms=0)


def refusal(**values: object) -> tuple[str, str]:
    """The field a refused construction names, and its problem."""
    with pytest.raises(ValidationError) as refused:
        Tolerances(**values)
    [problem] = refused.value.errors()
    return ".".join(map(str, problem["loc"])), problem["msg"].removeprefix("Value error, ")
