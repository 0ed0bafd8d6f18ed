"""The label audit in Dagster: the blocking `labels_exist` check and the `label_audit` asset, on a real instance."""

from __future__ import annotations

import json

import pytest
import yaml
from dagster import AssetCheckKey, AssetKey
from dagster_runs import QUIET, evaluate, evaluation_key, run_job
from dagster_test_project import degraded

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
    assert not materialized.success and not materialized.get_asset_materialization_events()  # the partition fails
    assert (
        instance.get_status_by_partition(
            AssetKey("golden_question_set"), ["alpha"], defs.resolve_assets_def("golden_question_set").partitions_def
        )["alpha"].value
        == "FAILED"
    )
    [check] = materialized.get_asset_check_evaluations()
    assert check.asset_check_key == LABELS_CHECK and not check.passed
    assert [r.data["question_id"] for r in check.metadata["missing_labels"].value.records] == ["a4"]

    refused = run_job(defs, instance, EVALUATION_JOB, evaluation_key("alpha", "good"), raise_on_error=False)
    assert not refused.success and not refused.get_asset_materialization_events()
    failure = next(e for e in refused.all_events if e.is_step_failure)
    assert "labels_exist" in failure.step_failure_data.error.to_string()
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
def test_nightly_holds_back_the_set_whose_labels_fail_and_evaluates_the_other(project, instance):
    """Each set runs on its own: the failed label check fails its own set's partition only."""
    import io

    from rich.console import Console

    from retrieval_pipeline.cli.nightly import run_nightly

    _name_corpus(project, ALPHA_DOCUMENTS)
    output = io.StringIO()

    report = run_nightly(project.config, instance=instance, console=Console(file=output, width=200))

    [failed] = [o for o in report.outcomes if not o.success]
    assert failed.partition == "alpha" and "'a4'" in failed.message
    assert report.exit_code == 2, output.getvalue()
    assert instance.get_materialized_partitions(AssetKey("golden_question_set")) == {"beta.small"}
    assert instance.get_materialized_partitions(AssetKey("retrieval_evaluation")) == {"good|beta.small", "other|beta.small"}
    assert "golden_question_set_job [alpha]: 1 label(s) name documents no corpus holds" in output.getvalue()
    assert "alpha × good: skipped" in output.getvalue()
