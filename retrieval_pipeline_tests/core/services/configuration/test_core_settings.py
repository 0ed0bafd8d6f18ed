"""The evaluation settings: read from the configuration in one place, the command line's overrides on top."""

from __future__ import annotations

import pytest
import yaml

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.scoring import CutOffs
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.baselines import BaselinePolicy
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy

CONFIGURED = {
    "cutoffs": [1, 3, 10],
    "tolerances": {"max_top1_drop": 0.05, "max_top3_drop": 0.2, "min_compared_questions": 3},
    "baseline_policy": "accepted",
    "audit": {"unstable_window": 7, "exclude_unstable": True},
}


def configured(tmp_path, data):
    path = tmp_path / "retrieval-eval.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return load_config(path)


def test_an_empty_configuration_gives_the_defaults_and_names_its_file(tmp_path):
    config = configured(tmp_path, {})

    assert EvaluationSettings.from_config(config) == EvaluationSettings(tolerances_source=config.source)


def test_every_setting_comes_from_the_configuration(tmp_path):
    config = configured(tmp_path, CONFIGURED)

    assert EvaluationSettings.from_config(config) == EvaluationSettings(
        tolerances=Tolerances(max_top1_drop=0.05, max_top3_drop=0.2, min_compared_questions=3),
        tolerances_source=config.source,
        cutoffs=CutOffs((1, 3, 10)),
        retry=RetryPolicy(),
        baseline_policy=BaselinePolicy.ACCEPTED,
        unstable_window=7,
    )


def test_unstable_questions_are_kept_unless_the_configuration_excludes_them(tmp_path):
    config = configured(tmp_path, {"audit": {"unstable_window": 7}})

    assert EvaluationSettings.from_config(config).unstable_window is None


def test_overrides_replace_only_what_they_give(tmp_path):
    config = configured(tmp_path, CONFIGURED)

    settings = EvaluationSettings.from_config(config, max_top3_drop=0.5, baseline_run_id="20240101T000000Z-abc")

    assert settings.tolerances == Tolerances(max_top1_drop=0.05, max_top3_drop=0.5, min_compared_questions=3)
    assert settings.baseline_run_id == "20240101T000000Z-abc"
    assert settings.unstable_window == 7


def test_an_override_making_a_tolerance_invalid_is_refused_naming_it(tmp_path):
    config = configured(tmp_path, {})

    with pytest.raises(InvalidInputError) as refused:
        EvaluationSettings.from_config(config, max_top1_drop=10.0)

    assert str(refused.value) == "max_top1_drop must be a fraction from 0 to 1 (0.1 = 10 pp), got 10; did you mean 0.10?"
