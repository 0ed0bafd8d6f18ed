"""The recommended team deployment, run for real, started the way docs/production.md says a team works: a
backfill of the evaluation job (`dagster job backfill`, what the UI's "Launch backfill" does) queues one
run per partition, which the daemon hands to the Celery run launcher; the daemon's declarative automation
then refreshes the leaderboard and each set's label audit by itself; then the schedule's tick and the index
sensor. PostgreSQL holds the runs, materializations and check results; the store the Parquet."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial

import pytest
from dagster import AssetKey, DagsterEventType, DagsterRunStatus, RunsFilter
from dagster_test_project import RETRIEVERS, SETS, degraded

psycopg2 = pytest.importorskip("psycopg2", reason="the team deployment needs the [team] extra")
celery_tags = pytest.importorskip("dagster_celery.tags", reason="the team deployment needs the [team] extra")

from services import (
    BACKFILL_TAG,
    PARTITION_TAG,
    SENSOR_NAME_TAG,
    listening_addresses,
    refreshed_after,
    team_instance,
    wait_for,
    wait_for_daemon,
    wait_for_runs,
)

from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, RETRIEVERS_JOB
from retrieval_pipeline.dagster_layer.partitions import ProjectPartitions
from retrieval_pipeline.dagster_layer.schedules import NIGHTLY_SCHEDULE, TRIGGER_TAG
from retrieval_pipeline.dagster_layer.sensors import AUTOMATION_SENSOR, INDEX_SENSOR

PAIRS = [(s, r) for s in SETS for r in RETRIEVERS]
PARTITIONS = ProjectPartitions(SETS, RETRIEVERS)
RUNS_PER_BACKFILL = len(PAIRS)
"""One run per evaluation partition: each run holds one partition and one step."""
RUN_SECONDS = 120
DAEMON_WAIT_SECONDS = 150
"""A schedule tick (its cron ticks every minute), the runs it requests, then the automation's refresh."""
SET_TAG = "dagster/partition/set"
LEADERBOARD, LABEL_AUDIT = AssetKey("leaderboard"), AssetKey("label_audit")


@dataclass(frozen=True)
class Backfilled:
    evaluations: list
    """The backfill's runs, finished."""
    leaderboard: object
    """The automation's leaderboard run (a run record) started after every evaluation had finished."""
    audits: dict
    """Each set's label audit run (a run record) the automation started after that set's evaluations."""


@pytest.fixture(scope="module")
def instance(team):
    with team_instance(team.env) as instance:
        yield instance


@pytest.fixture(scope="module")
def backfilled(team, instance) -> Backfilled:
    wait_for_daemon(instance, team.logs)
    run_ids = team.backfill(instance, EVALUATION_JOB)
    assert len(run_ids) == RUNS_PER_BACKFILL, team.logs()
    evaluations = wait_for_runs(instance, run_ids, RUN_SECONDS, team.logs)
    leaderboard = wait_for(
        lambda: refreshed_after(instance, LEADERBOARD, evaluations),
        "the automation's leaderboard refresh after the backfill",
        DAEMON_WAIT_SECONDS,
        team.logs,
    )
    audits = {
        set_identifier: wait_for(
            partial(refreshed_after, instance, LABEL_AUDIT, _of_set(evaluations, set_identifier), set_identifier),
            f"the automation's label audit of {set_identifier}",
            DAEMON_WAIT_SECONDS,
            team.logs,
        )
        for set_identifier in SETS
    }
    return Backfilled(evaluations, leaderboard, audits)


def _of_set(runs: list, set_identifier: str) -> list:
    return [run for run in runs if run.tags[SET_TAG] == set_identifier]


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


def _assert_ran_on_a_worker(team, instance, run) -> None:
    assert celery_tags.DAGSTER_CELERY_TASK_ID_TAG in run.tags  # handed to the broker by the Celery run launcher
    (start,) = instance.all_logs(run.run_id, of_type=DagsterEventType.RUN_START)
    assert os.getpgid(start.dagster_event.pid) == team.service("celery-worker-1").process.pid  # inside the worker's pool


def test_a_backfill_runs_every_partition_on_the_celery_worker(team, instance, backfilled):
    assert {run.tags[PARTITION_TAG] for run in backfilled.evaluations} == {str(key) for key in PARTITIONS.evaluation_keys()}
    assert len({run.tags[BACKFILL_TAG] for run in backfilled.evaluations}) == 1
    for run in backfilled.evaluations:
        assert run.status == DagsterRunStatus.SUCCESS, team.logs()
        assert run.job_name == EVALUATION_JOB
        _assert_ran_on_a_worker(team, instance, run)


def test_declarative_automation_refreshes_the_leaderboard_and_each_label_audit_on_the_worker(team, instance, backfilled):
    for record in [backfilled.leaderboard, *backfilled.audits.values()]:
        assert record.dagster_run.tags[SENSOR_NAME_TAG] == AUTOMATION_SENSOR
        _assert_ran_on_a_worker(team, instance, record.dagster_run)
    assert {record.dagster_run.tags[PARTITION_TAG] for record in backfilled.audits.values()} == set(SETS)
    (verdict,) = _sql(
        team,
        "select execution_status from asset_check_executions where check_name = 'every_pair_passes' and run_id = %s",
        backfilled.leaderboard.dagster_run.run_id,
    )
    assert verdict == ("SUCCEEDED",)


def test_materializations_and_per_partition_check_results_are_in_postgresql(team, backfilled):
    partitions = {str(key) for key in PARTITIONS.evaluation_keys()}
    materialized = _sql(
        team,
        "select distinct partition from event_logs where dagster_event_type = 'ASSET_MATERIALIZATION' and asset_key = %s",
        AssetKey("retrieval_evaluation").to_string(),
    )
    assert {p for (p,) in materialized} == partitions
    checks = _sql(team, "select partition, execution_status from asset_check_executions where check_name = 'no_regression'")
    assert {p for p, status in checks if status == "SUCCEEDED"} == partitions


def test_the_parquet_runs_are_in_the_shared_store(team, backfilled):
    store = ResultStore(str(team.project.store))
    for set_identifier, retriever_identifier in PAIRS:
        (stored,) = store.history(HistoryKey(set_identifier, retriever_identifier))
        assert stored.complete


def test_the_daemon_ticks_the_schedule_and_sensor_and_the_leaderboard_refreshes_itself(team, instance, backfilled):
    _turn(team, "sensor", INDEX_SENSOR, "start")
    wait_for(lambda: "other" in _sensor_cursor(instance), "the index sensor's first tick", DAEMON_WAIT_SECONDS, team.logs)
    team.project.write_run("other", degraded("a3"))  # a rebuilt index (a new version), better than before: no regression
    _turn(team, "schedule", NIGHTLY_SCHEDULE, "start")
    try:
        wait_for(
            lambda: len(_runs(instance, **{TRIGGER_TAG: "nightly"})) >= len(PAIRS),
            "a nightly tick",
            DAEMON_WAIT_SECONDS,
            team.logs,
        )
    finally:
        _turn(team, "schedule", NIGHTLY_SCHEDULE, "stop")  # one tick is the test; the cron ticks every minute

    def requested():
        return _runs(instance, **{TRIGGER_TAG: "nightly"}) + _runs(instance, **{TRIGGER_TAG: "index_version"})

    def finished():
        runs = requested()
        done = all(r.status in (DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED) for r in runs)
        evaluations = [r for r in runs if r.job_name == EVALUATION_JOB]
        return done and any(r.job_name == RETRIEVERS_JOB for r in runs) and refreshed_after(instance, LEADERBOARD, evaluations)

    wait_for(finished, "the requested runs and the leaderboard refresh", DAEMON_WAIT_SECONDS, team.logs)
    nightly, indexed = _runs(instance, **{TRIGGER_TAG: "nightly"}), _runs(instance, **{TRIGGER_TAG: "index_version"})
    assert all(r.status == DagsterRunStatus.SUCCESS for r in nightly + indexed), team.logs()
    assert len(nightly) == len(PAIRS)
    assert {r.tags[PARTITION_TAG] for r in indexed if r.job_name == EVALUATION_JOB} == {
        str(key) for key in PARTITIONS.evaluation_keys("other")
    }
    for run in nightly + indexed:
        _assert_ran_on_a_worker(team, instance, run)


def test_nothing_listens_beyond_loopback(team, backfilled):
    groups = {s.process.pid for s in team.services}
    addresses = listening_addresses(groups)
    ports = {
        int(team.env["DAGSTER_PG_PORT"]),
        int(team.env["DAGSTER_GRPC_PORT"]),
        int(team.env["DAGSTER_CELERY_BROKER_URL"].rsplit(":", 1)[1].split("/")[0]),
    }
    assert ports <= {port for _, port in addresses}
    assert {address for address, _ in addresses} <= {"127.0.0.1", "::1"}


def _turn(team, kind: str, name: str, action: str) -> None:
    result = team.command("dagster", kind, action, name, "-w", str(team.workspace), timeout=60)
    assert result.returncode == 0, result.stderr


def _sensor_cursor(instance) -> str:
    state = next((s for s in instance.all_instigator_state() if s.instigator_name == INDEX_SENSOR), None)
    return (state.instigator_data.cursor or "") if state and state.instigator_data else ""
