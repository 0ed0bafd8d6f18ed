"""The regression check runs in the evaluation's own step and compares with the partition's previous run; a
pair that fails it with severity ERROR fails its run and its partition, with its figures on the failure."""

from __future__ import annotations

import json
import logging

import pytest
from dagster import AssetCheckKey, AssetCheckSeverity, AssetKey, TableMetadataValue
from dagster_runs import evaluate, failure_metadata, only_check, only_materialization
from dagster_test_project import PERFECT, degraded, write_project

from retrieval_pipeline.dagster_layer.definitions import build_definitions

CHECK = AssetCheckKey(AssetKey("retrieval_evaluation"), "no_regression")


@pytest.mark.slow
def test_a_second_run_with_an_unchanged_retriever_passes(defs, instance):
    first = only_materialization(evaluate(defs, instance, "alpha", "good"))
    evaluate(defs, instance, "beta.small", "good")  # another partition in between is not a baseline
    result = evaluate(defs, instance, "alpha", "good")
    check = only_check(result)
    assert check.passed and check.severity == AssetCheckSeverity.ERROR
    assert check.metadata["verdict"].value == "No regression: top-1 +0.0 pp, top-3 +0.0 pp."
    assert check.metadata["baseline_run_id"].value == first.metadata["run_id"].value
    assert check.metadata["flipped_to_miss"].value == []
    assert check.metadata["top1_change"].value == "+0.0 pp (baseline 100.0%, now 100.0%)"


def test_after_labels_grow_the_checks_change_names_the_rescored_baseline_it_was_computed_from(project, instance):
    evaluate(build_definitions(project.config), instance, "beta.small", "good")  # b3 ranks d7 first: top-1 50.0%
    beta = json.loads((project.root / "sets" / "beta.json").read_text(encoding="utf-8"))
    beta["questions"][2]["expected_document_ids"] = ["d3", "d7"]  # d7 judged relevant since
    (project.root / "sets" / "beta.json").write_text(json.dumps(beta), encoding="utf-8")

    check = only_check(evaluate(build_definitions(project.config), instance, "beta.small", "good"))

    assert check.metadata["top1_change"].value == (
        "+0.0 pp on the 4 compared questions (baseline 75.0% rescored (50.0% as stored), now 75.0%)"
    )


def test_a_first_run_draws_no_empty_delta_tables(defs, instance):
    check = only_check(evaluate(defs, instance, "alpha", "good"))
    assert check.passed and check.metadata["top1_change"].value == "not compared (now 100.0%)"
    assert "by_form_deltas" not in check.metadata and "by_hard_class_deltas" not in check.metadata


@pytest.mark.slow
def test_a_degraded_retriever_fails_the_check_and_lists_the_flipped_questions(defs, instance, project):
    evaluate(defs, instance, "alpha", "good")
    project.write_run("good", degraded("a1", "a2"))

    result = evaluate(defs, instance, "alpha", "good", raise_on_error=False)

    assert not result.success and not result.get_asset_materialization_events()  # the run and the partition fail
    partitions = defs.resolve_assets_def("retrieval_evaluation").partitions_def
    assert instance.get_status_by_partition(CHECK.asset_key, ["good|alpha"], partitions)["good|alpha"].value == "FAILED"
    check = only_check(result)
    assert check.asset_check_key == CHECK
    assert not check.passed and check.severity == AssetCheckSeverity.ERROR
    assert check.partition == "good|alpha"  # recorded against its own partition (preview feature)
    assert check.metadata["is_regression"].value is True
    assert check.metadata["verdict"].value.startswith("Regression: top-1 hit rate dropped 33.3 pp (tolerance 10.0 pp)")
    assert check.metadata["flipped_to_miss"].value == ["a1", "a2"]
    assert check.metadata["flipped_to_miss_count"].value == "2"
    assert check.metadata["top1_change"].value == "-33.3 pp (baseline 100.0%, now 66.7%)"
    by_form = {r.data["key"]: r.data for r in check.metadata["by_form_deltas"].value.records}
    assert by_form["match"]["top1_change"] == "-66.7 pp" and by_form["gap"]["top1_change"] == "+0.0 pp"
    by_class = {r.data["key"]: r.data for r in check.metadata["by_hard_class_deltas"].value.records}
    assert by_class["near-duplicate"]["top3_change"] == "-100.0 pp"
    figures = failure_metadata(result)  # the regressed run's figures, on its failed run
    assert figures["is_regression"].value is True and figures["top1_hit_rate"].value == 0.6667

    # The failed run became the baseline: restoring the retriever is a recovery, not a regression.
    project.write_run("good", PERFECT)
    recovered = only_check(evaluate(defs, instance, "alpha", "good"))
    assert recovered.passed and recovered.metadata["flipped_to_hit"].value == ["a1", "a2"]


@pytest.mark.slow
def test_tolerances_and_severity_come_from_the_configuration(tmp_path, instance):
    project = write_project(
        tmp_path / "lenient", tolerances={"max_top1_drop": 0.2, "max_top3_drop": 0.2}, dagster={"check_severity": "WARN"}
    )
    defs = build_definitions(project.config)
    evaluate(defs, instance, "alpha", "good")
    project.write_run("good", degraded("a1"))  # 16.7 pp: within 20 pp
    within = only_check(evaluate(defs, instance, "alpha", "good"))
    assert within.passed and within.metadata["max_top1_drop"].value == "20.0 pp"
    project.write_run("good", degraded("a1", "a2", "a3"))  # a further 33.3 pp
    beyond = only_check(evaluate(defs, instance, "alpha", "good"))
    assert not beyond.passed and beyond.severity == AssetCheckSeverity.WARN


def test_an_incomplete_run_fails_the_check_but_is_recorded(tmp_path, instance):
    """A question whose text is in both sets under different ids cannot be replayed: the retriever errs."""
    project = write_project(tmp_path / "ambiguous")
    beta = project.root / "sets" / "beta.json"
    data = json.loads(beta.read_text(encoding="utf-8"))
    data["questions"][0]["question"] = "alpha one wing lift"  # a1's text, under the id b1
    beta.write_text(json.dumps(data), encoding="utf-8")
    defs = build_definitions(project.config)

    result = evaluate(defs, instance, "alpha", "good", raise_on_error=False)

    assert not result.success and not result.get_asset_materialization_events()
    check = only_check(result)
    assert not check.passed
    assert check.metadata["complete"].value is False
    assert check.metadata["errored_questions"].value == ["a1"]
    assert check.metadata["verdict"].value.startswith("Incomplete run")
    assert failure_metadata(result)["errored_questions"].value == 1


@pytest.mark.slow
def test_an_inconclusive_drop_passes_the_check_with_severity_warn_and_says_why(tmp_path, instance):
    project = write_project(tmp_path / "gated", tolerances={"min_significance": 0.05})
    defs = build_definitions(project.config)
    evaluate(defs, instance, "alpha", "good")
    project.write_run("good", degraded("a1", "a2"))  # 33.3 pp, but two flips of six questions prove nothing

    check = only_check(evaluate(defs, instance, "alpha", "good"))

    assert check.passed and check.severity == AssetCheckSeverity.WARN
    assert check.metadata["is_inconclusive"].value is True and check.metadata["is_regression"].value is False
    assert check.description.startswith("Inconclusive: top-1 hit rate dropped 33.3 pp (tolerance 10.0 pp), corrected p")
    assert check.metadata["min_significance"].value == "0.05"
    slices = {(r.data["slice"], r.data["measure"]): r.data for r in check.metadata["slice_tests"].value.records}
    assert slices[("overall", "top1")]["change"] == "-33.3 pp" and not slices[("overall", "top1")]["survives"]
    assert slices[("overall", "mrr@3")]["delta_95_ci"].endswith("to +0.000")  # the ranking figures' paired tests
    assert check.metadata["surviving_differences"].value == 0
    assert "none" in check.metadata["minimum_detectable_drop"].value  # six questions cannot show any drop
    assert check.metadata["mrr@3_change"].value.startswith("-0.")
    assert raw_floats(check.metadata) == []  # every figure reads as its measure does: pp, three decimals


def raw_floats(metadata) -> list[str]:
    """The keys (and table cells) holding a float a person would have to round in their head."""
    found = [key for key, value in metadata.items() if isinstance(value.value, float)]
    for key, value in metadata.items():
        if isinstance(value, TableMetadataValue):
            found += [f"{key}.{name}" for r in value.records for name, cell in r.data.items() if isinstance(cell, float)]
    return found


@pytest.mark.slow
def test_an_unreadable_store_file_is_a_warning_in_the_event_log_and_the_check_uses_the_latest_readable_run(
    defs, instance, project
):
    first = only_materialization(evaluate(defs, instance, "alpha", "good"))
    summaries = project.store / "summaries" / "alpha" / "good" / "retrieval_hit_rate"
    damaged = summaries / "20991231T000000000000Z-0badf11e.parquet"
    damaged.write_bytes(b"")

    result = evaluate(defs, instance, "alpha", "good")

    assert result.success and only_check(result).metadata["baseline_run_id"].value == first.metadata["run_id"].value
    warnings = [r.user_message for r in instance.all_logs(result.run_id) if r.level == logging.WARNING]
    assert any(message.startswith(f"skipped {damaged}: not a readable Parquet file") for message in warnings), warnings


@pytest.mark.slow
def test_a_drop_lost_to_unjudged_documents_passes_with_warn_and_names_the_questions_to_judge(tmp_path, instance):
    project = write_project(tmp_path / "labels", tolerances={"max_unjudged_share": 0.5})
    defs = build_definitions(project.config)
    evaluate(defs, instance, "alpha", "good")
    project.write_run("good", degraded("a1", "a2"))  # both lost hits now rank documents nobody judged

    check = only_check(evaluate(defs, instance, "alpha", "good"))

    assert check.passed and check.severity == AssetCheckSeverity.WARN
    assert check.metadata["is_inconclusive"].value is True and check.metadata["is_regression"].value is False
    assert check.description.startswith("Inconclusive: unjudged: top-1 hit rate dropped 33.3 pp (tolerance 10.0 pp)")
    assert "2 of the 2 lost hits have unjudged documents in their new top 3" in check.description
    assert check.metadata["unjudged_lost_hits"].value == ["a1", "a2"]
    assert check.metadata["unjudged_lost_hit_count"].value == "2"
    assert check.metadata["max_unjudged_share"].value == "0.5"
