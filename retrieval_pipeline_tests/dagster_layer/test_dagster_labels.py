"""The Dagster evaluation scores under the chosen labels and says which, on the asset and on its check."""

from __future__ import annotations

import json

import pytest
from dagster_runs import evaluate, only_check, only_materialization
from dagster_test_project import BETA, write_project

from retrieval_pipeline.dagster_layer.definitions import build_definitions


@pytest.fixture
def machine_labelled(tmp_path):
    """beta.small with a machine judge's yes for d8 on b4, the document `good` ranks first there."""
    project = write_project(tmp_path / "project", sets=("beta.small",))
    questions = [{**q, "machine_expected_document_ids": ["d8"]} if q["id"] == "b4" else q for q in BETA["questions"]]
    beta = {**BETA, "machine_judged_by": "judge@1", "questions": questions}
    (project.root / "sets" / "beta.json").write_text(json.dumps(beta), encoding="utf-8")
    return project


def test_the_evaluation_and_its_check_say_which_labels_scored_the_run(machine_labelled, instance):
    human = evaluate(build_definitions(machine_labelled.config), instance, "beta.small", "good")
    assert only_materialization(human).metadata["labels"].value == "human"
    assert only_check(human).metadata["labels"].value == "human"
    assert only_materialization(human).metadata["top1_hit_rate"].value == 0.5  # b1, b2 of four

    both = evaluate(build_definitions(machine_labelled.config, labels="human+machine"), instance, "beta.small", "good")
    materialization, check = only_materialization(both), only_check(both)
    assert materialization.metadata["labels"].value == "human+machine"
    assert check.metadata["labels"].value == "human+machine"
    assert check.metadata["baseline_labels"].value == "human"
    assert materialization.metadata["top1_hit_rate"].value == 0.75  # b4's machine-labelled d8 counts
    assert "Baseline rescored under the current labels: 1 relabelled question kept" in check.metadata["verdict"].value
