"""The index-rebuild sensor (a new index version evaluates that retriever's partitions, once per version)
and the automations that refresh the leaderboard and the label audit after evaluations."""

from __future__ import annotations

import json

import pytest
from dagster import AssetKey, DagsterRun, DagsterRunStatus, DefaultSensorStatus, build_sensor_context
from dagster._core.utils import make_new_run_id
from dagster_runs import evaluate, run_job
from dagster_test_project import PERFECT, RETRIEVERS, SETS, degraded

from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, LEADERBOARD_JOB, RETRIEVERS_JOB
from retrieval_pipeline.dagster_layer.sensors import INDEX_SENSOR, LABEL_AUDIT_AUTOMATION, LEADERBOARD_AUTOMATION


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


def test_the_automations_are_on_by_default_and_cover_the_leaderboard_and_the_label_audit(defs):
    """Nothing to switch on; the real daemon's refresh is in the team test."""
    for name, covered in ((LEADERBOARD_AUTOMATION, "leaderboard"), (LABEL_AUDIT_AUTOMATION, "label_audit")):
        automation = defs.resolve_sensor_def(name)
        assert automation.default_status == DefaultSensorStatus.RUNNING
        assert automation.asset_selection.resolve(defs.resolve_asset_graph()) == {AssetKey(covered)}
        assert automation.minimum_interval_seconds == 30  # the sample project polls its index every 60 s


def refresh(defs, instance, cursor=None):
    context = build_sensor_context(instance=instance, cursor=cursor, repository_def=defs.get_repository_def())
    return defs.resolve_sensor_def(LEADERBOARD_AUTOMATION).evaluate_tick(context)


@pytest.mark.slow
def test_the_leaderboard_is_refreshed_after_new_evaluations_and_again_after_any_later_one(defs, instance):
    assert not refresh(defs, instance).run_requests  # nothing evaluated yet
    evaluate(defs, instance, "alpha", "good")
    first = refresh(defs, instance)
    assert [r.asset_selection for r in first.run_requests] == [[AssetKey("leaderboard")]]
    assert not refresh(defs, instance, first.cursor).run_requests  # requested already: not again

    evaluate(defs, instance, "beta.small", "good")  # finished after the request, before the refresh ran
    assert len(refresh(defs, instance, first.cursor).run_requests) == 1


def test_the_leaderboard_waits_while_an_evaluation_is_running_and_skips_what_it_already_shows(defs, instance):
    evaluate(defs, instance, "alpha", "good")
    running = DagsterRun(job_name=EVALUATION_JOB, run_id=make_new_run_id(), status=DagsterRunStatus.STARTED)
    instance.add_run(running)
    assert not refresh(defs, instance).run_requests
    instance.report_run_canceled(running)
    assert len(refresh(defs, instance).run_requests) == 1
    run_job(defs, instance, LEADERBOARD_JOB)  # e.g. `retrieval-eval nightly` refreshed it itself
    assert not refresh(defs, instance).run_requests
