"""The nightly schedule: cron and timezone from the configuration, one run request per partition."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from dagster import build_schedule_context
from dagster_test_project import RETRIEVERS, SETS

from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB
from retrieval_pipeline.dagster_layer.schedules import NIGHTLY_SCHEDULE


def test_a_tick_requests_every_partition(defs, instance):
    schedule = defs.resolve_schedule_def(NIGHTLY_SCHEDULE)
    assert schedule.cron_schedule == "30 3 * * *" and schedule.execution_timezone == "Europe/Paris"
    assert schedule.job_name == EVALUATION_JOB

    when = datetime(2026, 3, 1, 3, 30, tzinfo=ZoneInfo("Europe/Paris"))
    context = build_schedule_context(instance=instance, scheduled_execution_time=when, repository_def=defs.get_repository_def())
    requests = schedule.evaluate_tick(context).run_requests

    assert sorted(str(r.partition_key) for r in requests) == sorted(f"{r}|{s}" for r in RETRIEVERS for s in SETS)
    assert len({r.run_key for r in requests}) == len(requests)
    assert all(r.run_key.startswith(when.isoformat()) for r in requests)

    later = build_schedule_context(
        instance=instance, scheduled_execution_time=when.replace(day=2), repository_def=defs.get_repository_def()
    )
    assert not {r.run_key for r in requests} & {r.run_key for r in schedule.evaluate_tick(later).run_requests}


def test_a_manual_evaluation_without_a_tick_time_still_requests_every_partition(defs, instance):
    context = build_schedule_context(instance=instance, repository_def=defs.get_repository_def())
    requests = defs.resolve_schedule_def(NIGHTLY_SCHEDULE).evaluate_tick(context).run_requests
    assert len(requests) == len(SETS) * len(RETRIEVERS)


def test_the_demo_schedule_uses_the_configuration_defaults(monkeypatch):
    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)
    from retrieval_pipeline.dagster_layer.definitions import build_definitions

    schedule = build_definitions().resolve_schedule_def(NIGHTLY_SCHEDULE)
    assert (schedule.cron_schedule, schedule.execution_timezone) == ("0 2 * * *", "UTC")
