"""The check over an edited set, the `accepted` baseline policy, the `accept_baseline` job and a pinned
baseline, on a real Dagster instance."""

from __future__ import annotations

import pytest
import yaml
from dagster import AssetCheckSeverity
from dagster_runs import QUIET, evaluate, evaluation_key, failure_metadata, only_check, only_materialization
from dagster_test_project import ALPHA, degraded, write_project

from retrieval_pipeline.dagster_layer.assets import BASELINE_TAG
from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, build_definitions
from retrieval_pipeline.dagster_layer.labels.acceptance import ACCEPT_JOB


def relabel(project, *question_ids: str) -> None:
    edit(project, question_ids, lambda question: {**question, "expected_document_ids": ["d99"]})


def reword(project, *question_ids: str) -> None:
    edit(project, question_ids, lambda question: {**question, "question": question["question"] + " (reworded)"})


def edit(project, question_ids, change) -> None:
    data = yaml.safe_load(yaml.safe_dump(ALPHA))
    data["questions"] = [change(question) if question["id"] in question_ids else question for question in data["questions"]]
    (project.root / "sets" / "alpha.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def with_config(project, **changes):
    config = yaml.safe_load(project.config.read_text(encoding="utf-8"))
    project.config.write_text(yaml.safe_dump({**config, **changes}, sort_keys=False), encoding="utf-8")
    return build_definitions(project.config)


def accept(defs, instance, run_id: str, raise_on_error: bool = True):
    config = {"set": "alpha", "retriever": "good", "run_id": run_id, "accepted_by": "ann"}
    return defs.resolve_job_def(ACCEPT_JOB).execute_in_process(
        instance=instance, run_config={**QUIET, "ops": {"accept_stored_run": {"config": config}}}, raise_on_error=raise_on_error
    )


@pytest.mark.slow
def test_relabelled_questions_pass_the_check_and_its_metadata_says_what_changed(defs, instance, project):
    evaluate(defs, instance, "alpha", "good")
    relabel(project, "a1", "a2")

    check = only_check(evaluate(defs, instance, "alpha", "good"))

    assert check.passed
    assert check.metadata["verdict_status"].value == "pass"
    rescoring = "Baseline rescored under the current labels: 2 relabelled questions kept."
    assert check.metadata["set_changes"].value == "Set changed since the baseline: 2 relabelled; compared on 6 questions."
    assert check.metadata["baseline_rescoring"].value == rescoring and check.description.endswith(rescoring)
    assert check.metadata["relabelled_questions"].value == check.metadata["rescored_questions"].value == ["a1", "a2"]
    assert check.metadata["compared_questions"].value == "6"
    assert check.metadata["top1_change"].value.startswith("+0.0 pp on the 6 compared questions")


@pytest.mark.slow
def test_a_judged_no_question_stays_compared_and_the_metadata_names_a_reworded_one_with_why(defs, instance, project):
    evaluate(defs, instance, "alpha", "good")
    changes = {"a1": lambda q: {**q, "rejected_document_ids": ["d98"]}, "a2": lambda q: {**q, "question": q["question"] + "?!"}}
    edit(project, ("a1", "a2"), lambda question: changes[question["id"]](question))

    check = only_check(evaluate(defs, instance, "alpha", "good"))

    why = "asked with another text: its stored ranking answered another question"
    assert check.metadata["rescored_questions"].value == ["a1"] and check.metadata["compared_questions"].value == "5"
    assert check.metadata["not_rescored_questions"].value == [{"question_id": "a2", "reason": why}]
    assert check.metadata["baseline_rescoring"].value.endswith(f"1 relabelled question kept, 1 left out: a2 ({why}).")


@pytest.mark.slow
def test_too_few_unchanged_questions_pass_with_a_warning_saying_not_comparable(tmp_path, instance):
    project = write_project(tmp_path / "strict", tolerances={"min_compared_questions": 5})
    defs = build_definitions(project.config)
    evaluate(defs, instance, "alpha", "good")
    reword(project, "a1", "a2")
    project.write_run("good", degraded("a3", "a4"))

    check = only_check(evaluate(defs, instance, "alpha", "good"))

    assert check.passed and check.severity == AssetCheckSeverity.WARN
    assert check.metadata["verdict_status"].value == "not_comparable"
    assert check.description.startswith("Not comparable: only 4 unchanged question(s)")


@pytest.mark.slow
def test_under_accepted_the_check_keeps_failing_until_the_accept_baseline_job_runs(defs, instance, project):
    defs = with_config(project, baseline_policy="accepted")
    first = only_materialization(evaluate(defs, instance, "alpha", "good")).metadata["run_id"].value
    project.write_run("good", degraded("a1", "a2"))
    regressed = evaluate(defs, instance, "alpha", "good", raise_on_error=False)
    regressed_id = failure_metadata(regressed)["run_id"].value
    assert not only_check(regressed).passed

    next_night = only_check(evaluate(defs, instance, "alpha", "good", raise_on_error=False))
    assert not next_night.passed and next_night.metadata["baseline_run_id"].value == first

    accepted = accept(defs, instance, regressed_id)
    assert accepted.success
    assert accepted.output_for_node("accept_stored_run") == regressed_id

    after = only_check(evaluate(defs, instance, "alpha", "good"))
    assert after.passed and after.metadata["baseline_run_id"].value == regressed_id


def test_the_accept_baseline_job_fails_for_an_unknown_run_and_records_nothing(defs, instance, project):
    evaluate(defs, instance, "alpha", "good")

    result = accept(defs, instance, "20260101T000000000000Z-nope", raise_on_error=False)

    assert not result.success
    assert not (project.store / "acceptances").exists()


@pytest.mark.slow
def test_a_run_tag_pins_the_baseline_of_the_evaluation(defs, instance, project):
    pinned = only_materialization(evaluate(defs, instance, "alpha", "good")).metadata["run_id"].value
    project.write_run("good", degraded("a1", "a2"))
    evaluate(defs, instance, "alpha", "good", raise_on_error=False)  # the regression, now the latest complete run
    project.write_run("good", degraded("a1"))

    result = defs.resolve_job_def(EVALUATION_JOB).execute_in_process(
        instance=instance,
        partition_key=evaluation_key("alpha", "good"),
        run_config=QUIET,
        tags={BASELINE_TAG: pinned},
        raise_on_error=False,  # a1 lost against the pinned run: a regression
    )

    check = only_check(result)
    assert check.metadata["baseline_run_id"].value == pinned
    assert check.metadata["flipped_to_miss"].value == ["a1"]
