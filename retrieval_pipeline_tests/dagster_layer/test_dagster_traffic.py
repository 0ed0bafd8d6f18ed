"""Query logs and coverage in Dagster, on a real ephemeral instance: counts and shares in the metadata and
never a query's text (examples: false), the warning check below coverage.min_share, the covered share's
history chart, and the sensor that notices a new or grown log file."""

from __future__ import annotations

import json
import sys

import pytest
import yaml
from dagster import AssetCheckSeverity, build_sensor_context
from dagster_runs import only_check, only_materialization, run_job
from traffic_project import SECRET, built_traffic, traffic_config

from retrieval_pipeline.core.base.extras import install_command
from retrieval_pipeline.core.golden.query_logs import normalised
from retrieval_pipeline.dagster_layer.definitions import build_definitions
from retrieval_pipeline.dagster_layer.traffic.coverage import COVERAGE_JOB, QUERY_LOG_JOB, coverage_key
from retrieval_pipeline.dagster_layer.traffic.sensor import QUERY_LOG_SENSOR

SET = "demo.cranfield"


@pytest.fixture
def traffic_project(tmp_path, shared_data):
    traffic = built_traffic(shared_data)
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(row) + "\n" for row in traffic.rows))
    config = traffic_config(tmp_path, log, count="count", redact=[r"[\w.]+@[\w.]+"])
    settings = yaml.safe_load(config.read_text())
    config.write_text(yaml.safe_dump({**settings, "coverage": {"min_share": 0.95}}))
    return build_definitions(config), traffic, log


def _text(metadata) -> str:
    return json.dumps({key: str(value.value) for key, value in metadata.items()}).casefold()


def test_the_query_log_asset_records_counts_and_no_query_text(traffic_project, instance):
    defs, traffic, _ = traffic_project
    metadata = only_materialization(run_job(defs, instance, QUERY_LOG_JOB, "traffic")).metadata
    assert metadata["distinct_queries"].value == len(traffic.rows)
    assert metadata["total_count"].value == traffic.total
    assert (metadata["lines_read"].value, metadata["bad_lines"].value) == (len(traffic.rows), 0)
    assert "most_asked" not in metadata
    text = _text(metadata)
    assert SECRET not in text and not any(normalised(row["query"])[:40] in text for row in traffic.rows)


def test_coverage_records_the_covered_share_warns_below_min_share_and_charts_its_history(traffic_project, instance):
    defs, traffic, _ = traffic_project
    key = coverage_key(SET, "traffic")
    first = run_job(defs, instance, COVERAGE_JOB, key)
    metadata = only_materialization(first).metadata
    expected = (traffic.total - traffic.off_topic) / traffic.total
    assert metadata["covered_share"].value == pytest.approx(expected)
    assert metadata["total_traffic"].value == traffic.total
    clusters = metadata["uncovered_by_cluster"].value.records
    assert sum(record.data["traffic"] for record in clusters) == traffic.off_topic
    assert all("examples" not in record.data for record in clusters)
    check = only_check(first)
    assert not check.passed and check.severity == AssetCheckSeverity.WARN and expected < 0.95
    text = _text(metadata)
    assert SECRET not in text and not any(normalised(row["query"])[:40] in text for row in traffic.rows)

    second = only_materialization(run_job(defs, instance, COVERAGE_JOB, key)).metadata
    assert "last 2 materializations" in second["history_chart"].value
    assert second["history_chart"].value.count("data:image/png;base64,") == 1


def test_coverage_without_the_coverage_extra_fails_its_run_naming_the_install_before_reading_the_log(
    traffic_project, instance, monkeypatch
):
    defs, _, log = traffic_project
    log.write_text('{"count": 1}\n')  # a bad line: said only if the log were read
    for name in [name for name in sys.modules if name.partition(".")[0] == "sklearn"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "sklearn", None)
    result = run_job(defs, instance, COVERAGE_JOB, coverage_key(SET, "traffic"), raise_on_error=False)
    error = next(event for event in result.all_events if event.is_step_failure).step_failure_data.error
    assert error.cause.message.splitlines() == [
        "retrieval_pipeline.core.base.errors.InvalidInputError: coverage clusters the uncovered traffic with scikit-learn; "
        f"sklearn not installed: {install_command('coverage')}"
    ]


def test_the_sensor_requests_a_new_or_grown_log_once(traffic_project, instance):
    defs, _, log = traffic_project
    sensor = defs.resolve_sensor_def(QUERY_LOG_SENSOR)

    def tick(cursor=None):
        context = build_sensor_context(
            instance=instance, cursor=cursor, resources=defs.resources, repository_def=defs.get_repository_def()
        )
        return sensor.evaluate_tick(context)

    first = tick()
    assert {(r.job_name, str(r.partition_key)) for r in first.run_requests} == {
        (QUERY_LOG_JOB, "traffic"),
        (COVERAGE_JOB, str(coverage_key(SET, "traffic"))),
    }
    assert tick(first.cursor).run_requests == []
    with log.open("a") as handle:
        handle.write(json.dumps({"query": "wing flutter at transonic speed", "count": 2}) + "\n")
    grown = tick(first.cursor)
    assert {r.job_name for r in grown.run_requests} == {QUERY_LOG_JOB, COVERAGE_JOB}
    assert not {r.run_key for r in grown.run_requests} & {r.run_key for r in first.run_requests}


def test_a_log_that_allows_examples_shows_its_most_asked_queries_redacted(tmp_path, shared_data, instance):
    traffic = built_traffic(shared_data)
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(row) + "\n" for row in traffic.rows))
    defs = build_definitions(traffic_config(tmp_path, log, count="count", examples=True, redact=[r"[\w.]+@[\w.]+"]))
    metadata = only_materialization(run_job(defs, instance, QUERY_LOG_JOB, "traffic")).metadata
    most_asked = [record.data for record in metadata["most_asked"].value.records]
    assert most_asked[0] == {
        "query": normalised(traffic.rows[0]["query"].replace(SECRET, "[redacted]")),
        "count": traffic.rows[0]["count"],
    }
    assert SECRET not in _text(metadata)


def test_each_night_counts_the_log_again_and_then_measures_its_coverage_again(traffic_project, instance):
    """Declarative automation: the log at the nightly schedule's time, its coverage once it is counted."""
    from datetime import datetime, timezone

    from dagster import evaluate_automation_conditions

    defs, _, _ = traffic_project

    def requested(cursor, when):
        result = evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor, evaluation_time=when)
        keys = {
            (r.key.to_user_string(), str(k)) for r in result.results for k in r.true_subset.expensively_compute_partition_keys()
        }
        return {key for key in keys if key[0] in ("query_log", "coverage")}, result.cursor

    evening, night = datetime(2026, 12, 1, 20, tzinfo=timezone.utc), datetime(2026, 12, 2, 3, tzinfo=timezone.utc)
    first, cursor = requested(None, evening)  # the sensor's first tick
    assert first == set()
    at_night, cursor = requested(cursor, night)  # past 02:00, the sample project's nightly cron
    assert at_night == {("query_log", "traffic")}
    run_job(defs, instance, QUERY_LOG_JOB, "traffic")
    counted, _ = requested(cursor, night)
    assert counted == {("coverage", str(coverage_key(SET, "traffic")))}
