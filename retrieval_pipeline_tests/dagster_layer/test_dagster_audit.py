"""The label audit in Dagster: the blocking `labels_exist` check and the `label_audit` asset, on a real instance."""

from __future__ import annotations

import json

import pytest
import yaml
from dagster import AssetCheckKey, AssetKey
from dagster._core.storage.tags import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG
from dagster_runs import QUIET, evaluate, evaluation_key, run_job
from dagster_test_project import degraded

from retrieval_pipeline.core.storage.store_reading import QUESTION_SETS_SIDE
from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, SETS_JOB, build_definitions

LABELS_CHECK = AssetCheckKey(AssetKey("golden_question_set"), "labels_exist")
ALPHA_DOCUMENTS = ["d1", "d2", "d22", "d3", "d5", "d7", "d8"]  # d4, the label of a4, is missing


def _name_corpus(project, documents) -> None:
    (project.root / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": d}) + "\n" for d in documents))
    config = yaml.safe_load(project.config.read_text())
    config["question_sets"][0]["corpus"] = "corpus.jsonl"
    project.config.write_text(yaml.safe_dump(config, sort_keys=False))


def test_a_set_whose_label_no_corpus_holds_fails_labels_exist_and_its_evaluations_do_not_run(project, instance):
    _name_corpus(project, ALPHA_DOCUMENTS)
    defs = build_definitions(project.config)

    materialized = run_job(defs, instance, SETS_JOB, "alpha", raise_on_error=False)
    assert not materialized.success  # a blocking check that fails fails its run, visibly
    [check] = materialized.get_asset_check_evaluations()
    assert check.asset_check_key == LABELS_CHECK and not check.passed
    assert [r.data["question_id"] for r in check.metadata["missing_labels"].value.records] == ["a4"]

    refused = run_job(defs, instance, EVALUATION_JOB, evaluation_key("alpha", "good"), raise_on_error=False)
    assert not refused.success and not refused.get_asset_materialization_events()
    failure = next(e for e in refused.all_events if e.is_step_failure)
    assert "labels_exist" in failure.step_failure_data.error.message
    assert not (project.store / "summaries" / "alpha").exists()
    assert evaluate(defs, instance, "beta.small", "good").success  # another set is not held back


def test_once_the_set_is_fixed_and_materialized_again_its_evaluations_run(project, instance):
    _name_corpus(project, ALPHA_DOCUMENTS)
    run_job(build_definitions(project.config), instance, SETS_JOB, "alpha", raise_on_error=False)
    _name_corpus(project, [*ALPHA_DOCUMENTS, "d4"])
    defs = build_definitions(project.config)

    [check] = run_job(defs, instance, SETS_JOB, "alpha").get_asset_check_evaluations()

    assert check.passed
    assert evaluate(defs, instance, "alpha", "good").success


def test_label_audit_reports_the_suspect_labels_of_the_latest_runs(project, instance):
    project.write_run("good", {**degraded("a1"), "a1": ["d7", "d8"]})
    project.write_run("other", {**degraded("a1"), "a1": ["d7", "d1x"]})
    defs = build_definitions(project.config)
    for retriever in ("good", "other"):
        evaluate(defs, instance, "alpha", retriever)

    result = (
        defs.resolve_implicit_global_asset_job_def()
        .get_subset(asset_selection={AssetKey("label_audit")})
        .execute_in_process(instance=instance, partition_key="alpha", run_config=QUIET)
    )

    [materialization] = result.get_asset_materialization_events()
    metadata = materialization.materialization.metadata
    assert metadata["suspect_label_count"].value == 1
    [row] = [r.data for r in metadata["findings"].value.records if r.data["kind"] == "suspect_label"]
    assert row["question_id"] == "a1" and "'d7'" in row["what_is_wrong"]
    assert metadata["power"].value.startswith("Power 80.0% (McNemar, significance 0.05, no repeated runs")
    assert metadata["top1_questions_needed"].value == 77
    assert metadata["top1_detectable_drop"].value > 0.9  # six questions: only losing almost all of them shows


@pytest.mark.slow
def test_a_run_over_every_evaluation_records_the_sets_that_may_run_and_names_the_one_held_back(project, instance):
    """A backfill of the whole range in one run (as `nightly` runs it): one set's failed label check
    fails its partitions, while the other set's partitions are materialized and checked, each its own."""
    _name_corpus(project, ALPHA_DOCUMENTS)
    defs = build_definitions(project.config)
    run_job(defs, instance, SETS_JOB, "alpha", raise_on_error=False)
    keys = [evaluation_key(s, r) for r in ("good", "other") for s in ("alpha", "beta.small")]

    result = defs.resolve_job_def(EVALUATION_JOB).execute_in_process(
        instance=instance,
        run_config=QUIET,
        raise_on_error=False,
        tags={ASSET_PARTITION_RANGE_START_TAG: str(keys[0]), ASSET_PARTITION_RANGE_END_TAG: str(keys[-1])},
    )

    assert not result.success
    assert {e.partition for e in result.get_asset_materialization_events()} == {"good|beta.small", "other|beta.small"}
    assert {e.partition: e.passed for e in result.get_asset_check_evaluations()} == {
        "good|beta.small": True,
        "other|beta.small": True,
    }
    failure = next(e for e in result.all_events if e.is_step_failure).step_failure_data
    held_back = failure.user_failure_data.metadata["failed_partitions"].value
    assert set(held_back) == {"good|alpha", "other|alpha"}
    assert all("labels_exist" in record["error"] for record in held_back.values())
    assert not (project.store / "summaries" / "alpha").exists()


@pytest.mark.slow
def test_nightly_holds_back_the_set_whose_labels_fail_and_evaluates_the_other(project, instance):
    """The sets run as one range: the failed label check fails its own set's partition only."""
    import io

    from rich.console import Console

    from retrieval_pipeline.cli.nightly import run_nightly

    _name_corpus(project, ALPHA_DOCUMENTS)
    output = io.StringIO()

    report = run_nightly(project.config, instance=instance, console=Console(file=output, width=200))

    [failed] = [o for o in report.outcomes if not o.success]
    assert failed.partition == "alpha" and "labels_exist" in failed.error and "'a4'" in failed.error
    assert report.exit_code == 2, output.getvalue()
    assert instance.get_materialized_partitions(AssetKey("golden_question_set")) == {"alpha", "beta.small"}
    assert instance.get_materialized_partitions(AssetKey("retrieval_evaluation")) == {"good|beta.small", "other|beta.small"}
    assert "golden_question_set_job [alpha]: partition alpha: blocking check labels_exist failed" in output.getvalue()
    assert "alpha × good: skipped" in output.getvalue()


def test_the_label_check_runs_alone_from_the_ui_without_materializing_the_set(project, instance):
    _name_corpus(project, ALPHA_DOCUMENTS)
    defs = build_definitions(project.config)
    job = defs.resolve_job_def(SETS_JOB).get_subset(asset_check_selection={LABELS_CHECK}, asset_selection=set())

    result = job.execute_in_process(instance=instance, partition_key="alpha", run_config=QUIET, raise_on_error=False)

    assert not result.success  # blocking, and failed
    [check] = result.get_asset_check_evaluations()
    assert check.asset_check_key == LABELS_CHECK and check.partition == "alpha" and not check.passed
    assert not result.get_asset_materialization_events()
    assert not (project.store / QUESTION_SETS_SIDE).exists()  # the check alone stores nothing either
