"""The index-rebuild sensor (a new index version evaluates that retriever's partitions, once per version)
and the declarative automation that refreshes the leaderboard and the label audit after evaluations."""

from __future__ import annotations

import json

import pytest
from dagster import AssetKey, DefaultSensorStatus, build_sensor_context, evaluate_automation_conditions
from dagster_runs import evaluate, evaluation_key, run_job
from dagster_test_project import PERFECT, RETRIEVERS, SETS, degraded

from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, RETRIEVERS_JOB
from retrieval_pipeline.dagster_layer.sensors import AUTOMATION_SENSOR, INDEX_SENSOR


def tick(defs, instance, cursor=None):
    context = build_sensor_context(
        instance=instance, cursor=cursor, resources=defs.resources, repository_def=defs.get_repository_def()
    )
    return defs.resolve_sensor_def(INDEX_SENSOR).evaluate_tick(context)


def evaluations(data) -> set[str]:
    return {str(r.partition_key) for r in data.run_requests if r.job_name == EVALUATION_JOB}


def test_the_interval_comes_from_the_configuration(defs):
    assert defs.resolve_sensor_def(INDEX_SENSOR).minimum_interval_seconds == 60


def test_unchanged_versions_request_nothing_and_a_new_version_requests_that_retriever_once(defs, instance, project):
    first = tick(defs, instance)  # never seen, never measured: everything is new
    assert evaluations(first) == {f"{r}|{s}" for r in RETRIEVERS for s in SETS}
    versions = json.loads(first.cursor)
    assert set(versions) == set(RETRIEVERS) and all(v.startswith("sha256:") for v in versions.values())

    unchanged = tick(defs, instance, first.cursor)
    assert unchanged.run_requests == [] and unchanged.cursor == first.cursor

    project.write_run("good", degraded("a1"))  # the "good" index is rebuilt
    rebuilt = tick(defs, instance, unchanged.cursor)
    assert evaluations(rebuilt) == {"good|alpha", "good|beta.small"}
    assert [(r.job_name, r.partition_key) for r in rebuilt.run_requests if r.job_name == RETRIEVERS_JOB] == [
        (RETRIEVERS_JOB, "good")
    ]
    new_version = json.loads(rebuilt.cursor)["good"]
    assert new_version != versions["good"] and json.loads(rebuilt.cursor)["other"] == versions["other"]
    assert all(new_version in r.run_key for r in rebuilt.run_requests)
    assert len({r.run_key for r in rebuilt.run_requests}) == len(rebuilt.run_requests)

    again = tick(defs, instance, rebuilt.cursor)
    assert again.run_requests == []

    project.write_run("good", PERFECT)  # back to the first version: it is new again relative to the cursor
    assert evaluations(tick(defs, instance, again.cursor)) == {"good|alpha", "good|beta.small"}


def test_a_first_observation_skips_what_the_store_already_measured_at_that_version(defs, instance):
    for set_identifier in SETS:
        evaluate(defs, instance, set_identifier, "good")  # e.g. `retrieval-eval nightly` just ran for "good"
    data = tick(defs, instance)
    assert evaluations(data) == {"other|alpha", "other|beta.small"}
    assert set(json.loads(data.cursor)) == set(RETRIEVERS)


def test_one_automation_sensor_is_on_by_default_and_refreshes_the_leaderboard_the_label_audit_and_the_agreement(defs):
    """Nothing to switch on; the real daemon's refresh is in the team test."""
    automation = defs.resolve_sensor_def(AUTOMATION_SENSOR)
    assert automation.default_status == DefaultSensorStatus.RUNNING
    assert automation.minimum_interval_seconds == 30  # the sample project polls its index every 60 s
    graph = defs.resolve_asset_graph()
    for asset in ("leaderboard", "label_audit", "generated_set_agreement"):
        assert graph.get(AssetKey(asset)).automation_condition.get_label() == "after_upstream"
    for on_demand in ("machine_judgements", "generated_questions"):  # a judge and a generator cost money
        assert graph.get(AssetKey(on_demand)).automation_condition is None


def requested(defs, instance, cursor=None):
    result = evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor)
    return {(key.to_user_string(), partition) for key, partition in _requested_partitions(result)}, result.cursor


def _requested_partitions(result):
    for asset_result in result.results:
        subset = asset_result.true_subset
        keys = subset.expensively_compute_partition_keys() if subset.is_partitioned else [None]
        yield from ((asset_result.key, key) for key in keys if subset.size)


@pytest.mark.slow
def test_an_evaluation_passed_or_regressed_refreshes_the_leaderboard_and_its_sets_audits_once(defs, instance, project):
    deployed, cursor = requested(defs, instance)  # the sensor's first tick, before any evaluation
    assert deployed == set()
    evaluate(defs, instance, "alpha", "good")
    first, cursor = requested(defs, instance, cursor)
    assert first == {("leaderboard", None), ("label_audit", "alpha"), ("generated_set_agreement", "alpha")}
    again, cursor = requested(defs, instance, cursor)
    assert again == set()  # requested already: not again

    project.write_run("good", degraded("a1", "a2"))
    regressed = run_job(defs, instance, EVALUATION_JOB, evaluation_key("alpha", "good"), raise_on_error=False)
    assert not regressed.success  # the pair failed, and was not materialized: the leaderboard must say so all the same
    after, _ = requested(defs, instance, cursor)
    assert after == {("leaderboard", None), ("label_audit", "alpha"), ("generated_set_agreement", "alpha")}
