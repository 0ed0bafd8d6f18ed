"""The recommended team deployment, run for real: `nightly --launch` through the queued coordinator and
the Celery run launcher, then the real daemon's schedule tick and index sensor, then the leaderboard
refreshing itself. PostgreSQL holds the runs, materializations and check results; the store the Parquet."""

from __future__ import annotations

import os
import time

import pytest
from dagster import AssetKey, DagsterEventType, DagsterRunStatus, RunsFilter
from dagster._core.definitions.run_request import InstigatorType
from dagster._core.storage.tags import SENSOR_NAME_TAG
from dagster_test_project import RETRIEVERS, SETS, degraded

psycopg2 = pytest.importorskip("psycopg2", reason="the team deployment needs the [team] extra")
celery_tags = pytest.importorskip("dagster_celery.tags", reason="the team deployment needs the [team] extra")

from services import listening_addresses, team_instance

from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB
from retrieval_pipeline.dagster_layer.partitions import ProjectPartitions
from retrieval_pipeline.dagster_layer.schedules import NIGHTLY_SCHEDULE, TRIGGER_TAG
from retrieval_pipeline.dagster_layer.sensors import INDEX_SENSOR, LEADERBOARD_AUTOMATION

PAIRS = [(s, r) for s in SETS for r in RETRIEVERS]
PARTITIONS = ProjectPartitions(SETS, RETRIEVERS)
RUNS_PER_LAUNCH = len(SETS) + len(RETRIEVERS) + len(PAIRS) + 1
DAEMON_WAIT_SECONDS = 120
FINISHED = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}


@pytest.fixture(scope="module")
def instance(team):
    with team_instance(team.env) as instance:
        yield instance


@pytest.fixture(scope="module")
def launched(team, instance):
    deadline = time.monotonic() + 60
    while "QUEUED_RUN_COORDINATOR" not in instance.get_daemon_heartbeats():  # the daemon is up and dequeuing
        assert time.monotonic() < deadline, team.logs()
        time.sleep(0.5)
    result = team.command("retrieval-eval", "nightly", "--launch", "--webserver", team.webserver)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}\n{team.logs()}"
    return result


def _sql(team, query: str, *params) -> list[tuple]:
    env = team.env
    with psycopg2.connect(
        host="127.0.0.1", port=env["DAGSTER_PG_PORT"], user=env["DAGSTER_PG_USERNAME"], dbname=env["DAGSTER_PG_DB"]
    ) as db:
        with db.cursor() as cursor:
            cursor.execute(query, params)
            return cursor.fetchall()


def _runs(instance, **tags) -> list:
    return instance.get_runs(filters=RunsFilter(tags=tags))


def test_nightly_launch_runs_every_partition_on_the_celery_worker(team, instance, launched):
    runs = _runs(instance, **{TRIGGER_TAG: "launch"})
    assert len(runs) == RUNS_PER_LAUNCH
    worker_group = team.service("celery-worker-1").process.pid
    for run in runs:
        assert run.status == DagsterRunStatus.SUCCESS, team.logs()
        assert celery_tags.DAGSTER_CELERY_TASK_ID_TAG in run.tags  # handed to the broker by the Celery run launcher
        (start,) = instance.all_logs(run.run_id, of_type=DagsterEventType.RUN_START)
        assert os.getpgid(start.dagster_event.pid) == worker_group  # executed inside the worker's pool
    assert "Leaderboard: alpha" in launched.stdout and "Regression checks" in launched.stdout
    assert launched.stdout.count("PASSED") == len(PAIRS)


def test_materializations_and_per_partition_check_results_are_in_postgresql(team, launched):
    partitions = {str(key) for key in PARTITIONS.evaluation_keys()}
    materialized = _sql(
        team,
        "select distinct partition from event_logs where dagster_event_type = 'ASSET_MATERIALIZATION' and asset_key = %s",
        AssetKey("retrieval_evaluation").to_string(),
    )
    assert {p for (p,) in materialized} == partitions
    checks = _sql(team, "select partition, execution_status from asset_check_executions where check_name = 'no_regression'")
    assert {p for p, status in checks if status == "SUCCEEDED"} == partitions


def test_the_parquet_runs_are_in_the_shared_store(team, launched):
    store = ResultStore(str(team.project.store))
    for set_identifier, retriever_identifier in PAIRS:
        (stored,) = store.history(HistoryKey(set_identifier, retriever_identifier))
        assert stored.complete


def test_the_daemon_ticks_the_schedule_and_sensor_and_the_leaderboard_refreshes_itself(team, instance, launched):
    _turn(team, "sensor", INDEX_SENSOR, "start")
    _wait_for(lambda: "other" in _sensor_cursor(instance), "the index sensor's first tick", team)  # versions seen
    team.project.write_run("other", degraded("a3", "b2", "a1"))  # a rebuilt index: a new version of "other"
    _turn(team, "schedule", NIGHTLY_SCHEDULE, "start")
    _wait_for(lambda: len(_runs(instance, **{TRIGGER_TAG: "nightly"})) >= len(PAIRS), "a nightly tick", team)
    _turn(team, "schedule", NIGHTLY_SCHEDULE, "stop")  # one tick is the test; the cron ticks every minute

    def finished():
        runs = _runs(instance, **{TRIGGER_TAG: "nightly"}) + _runs(instance, **{TRIGGER_TAG: "index_version"})
        evaluations = [r for r in runs if r.job_name == EVALUATION_JOB]
        return all(r.status in FINISHED for r in runs) and _leaderboard_refreshed_after(instance, evaluations)

    _wait_for(finished, "the requested runs and the leaderboard refresh", team)
    nightly, indexed = _runs(instance, **{TRIGGER_TAG: "nightly"}), _runs(instance, **{TRIGGER_TAG: "index_version"})
    assert all(r.status == DagsterRunStatus.SUCCESS for r in nightly + indexed), team.logs()
    assert {r.tags["dagster/partition"] for r in indexed if r.job_name == EVALUATION_JOB} == {
        str(key) for key in PARTITIONS.evaluation_keys("other")
    }


def test_nothing_listens_beyond_loopback(team, launched):
    groups = {s.process.pid for s in team.services}
    addresses = listening_addresses(groups)
    ports = {
        int(team.env["DAGSTER_PG_PORT"]),
        int(team.env["DAGSTER_GRPC_PORT"]),
        int(team.env["DAGSTER_CELERY_BROKER_URL"].rsplit(":", 1)[1].split("/")[0]),
    }
    assert ports <= {port for _, port in addresses}
    assert {address for address, _ in addresses} <= {"127.0.0.1", "::1"}


def _leaderboard_refreshed_after(instance, evaluations) -> bool:
    """A leaderboard run that leaderboard_automation requested by itself, started after every evaluation
    the schedule and the sensor ran had finished."""
    last_evaluation = max(r.end_time or float("inf") for r in (instance.get_run_record_by_id(e.run_id) for e in evaluations))
    automated = RunsFilter(tags={SENSOR_NAME_TAG: LEADERBOARD_AUTOMATION}, statuses=[DagsterRunStatus.SUCCESS])
    for record in instance.get_run_records(filters=automated):
        if AssetKey("leaderboard") in (record.dagster_run.asset_selection or ()) and record.start_time >= last_evaluation:
            return True
    return False


def _turn(team, kind: str, name: str, action: str) -> None:
    result = team.command("dagster", kind, action, name, "-w", str(team.workspace), timeout=60)
    assert result.returncode == 0, result.stderr


def _sensor_cursor(instance) -> str:
    states = instance.all_instigator_state(instigator_type=InstigatorType.SENSOR)
    state = next((s for s in states if s.instigator_name == INDEX_SENSOR), None)
    return (state.instigator_data.cursor or "") if state and state.instigator_data else ""


def _wait_for(condition, what: str, team) -> None:
    deadline = time.monotonic() + DAEMON_WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {DAEMON_WAIT_SECONDS} s\n{team.logs()}"
        time.sleep(1)
