"""The leaderboard's `every_pair_passes` check: one unpartitioned result, refreshed with the leaderboard,
that fails when any configured pair's latest run regressed or is incomplete, and names it."""

from __future__ import annotations

from dagster import AssetCheckKey, AssetCheckSeverity, AssetKey
from dagster_runs import evaluate, materialize_everything, only_check, run_job
from dagster_test_project import RETRIEVERS, SETS, degraded, write_project

from retrieval_pipeline.dagster_layer.definitions import LEADERBOARD_JOB, build_definitions
from retrieval_pipeline.dagster_layer.leaderboard_check import LEADERBOARD_CHECK

CHECK_KEY = AssetCheckKey(AssetKey("leaderboard"), LEADERBOARD_CHECK)


def test_one_regressed_pair_fails_the_leaderboard_check_which_names_it_and_its_verdict(project, defs, instance):
    materialize_everything(defs, instance, SETS, RETRIEVERS)
    project.write_run("good", degraded("a1", "a2"))
    evaluate(defs, instance, "alpha", "good", raise_on_error=False)  # the pair fails its run
    check = only_check(run_job(defs, instance, LEADERBOARD_JOB))

    assert (check.asset_check_key, check.passed, check.severity) == (CHECK_KEY, False, AssetCheckSeverity.ERROR)
    assert check.description.startswith(
        "1 of 4 pairs failed their latest check. alpha × good (regression): "
        "Regression: top-1 hit rate dropped 33.3 pp (tolerance 10.0 pp)"
    )
    assert check.metadata["failed_pairs"].value.startswith("alpha × good (regression): Regression: top-1")
    rows = {(r.data["set"], r.data["retriever"]): r.data["verdict"] for r in check.metadata["pairs"].records}
    first_runs = {("alpha", "other"): "baseline", **{("beta.small", r): "baseline" for r in RETRIEVERS}}
    assert rows == {("alpha", "good"): "regression", **first_runs}
    # What the asset catalog shows: the check's latest execution, unpartitioned, is this failure.
    latest = instance.event_log_storage.get_latest_asset_check_execution_by_key([CHECK_KEY])[CHECK_KEY]
    assert latest.event.asset_check_evaluation.passed is False


def test_the_leaderboard_check_passes_once_every_pair_passes_again(project, defs, instance):
    materialize_everything(defs, instance, SETS, RETRIEVERS)
    check = only_check(run_job(defs, instance, LEADERBOARD_JOB))
    assert check.passed and check.description == "No pair failed its latest check (4 pairs)."


def test_the_leaderboard_check_fails_with_the_configured_severity(tmp_path, instance):
    project = write_project(tmp_path / "warn", dagster={"check_severity": "WARN"}, sets=("alpha",), retrievers=("good",))
    defs = build_definitions(project.config)
    materialize_everything(defs, instance, ("alpha",), ("good",))
    project.write_run("good", degraded("a1", "a2"))
    evaluate(defs, instance, "alpha", "good")  # severity WARN: the pair is materialized, its check warns
    check = only_check(run_job(defs, instance, LEADERBOARD_JOB))
    assert (check.passed, check.severity) == (False, AssetCheckSeverity.WARN)
