"""`retrieval-eval history` and `retrieval-eval prune`."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from cli_helpers import HALF, PERFECT

from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore


def run(cli, project, retriever="good"):
    return cli("run", "cli.small", retriever, "--config", str(project.config), "--show", "none")


def test_history_lists_runs_newest_first_with_deltas_to_the_previous_complete_run(cli, project):
    run(cli, project)  # 100 %
    project.rankings("good", HALF)
    run(cli, project)  # 50 %
    project.rankings("good", {"alpha question": ["d1"], "beta question": None})
    run(cli, project)  # incomplete
    project.rankings("good", PERFECT)
    run(cli, project)  # 100 % again, compared with the 50 % run

    result = cli("history", "cli.small", "good", "--config", str(project.config))

    assert result.exit_code == 0, result.stderr
    stored = ResultStore(str(project.store)).history(HistoryKey("cli.small", "good"))
    rows = [line for line in result.stdout.splitlines() if "│" in line and "run id" not in line]
    assert [next(s.run_id for s in stored if s.run_id in row) for row in rows] == [s.run_id for s in stored]
    assert "(2 questions), newest first" in result.stdout
    newest, incomplete, half, first = rows
    assert "+50.0 pp" in newest
    assert "incomplete: 1 error" in incomplete and "pp" not in incomplete
    assert "-50.0 pp" in half
    assert "first run" in first


def test_history_json_and_limit_keep_the_delta_of_the_oldest_shown(cli, project):
    run(cli, project)
    project.rankings("good", HALF)
    run(cli, project)

    result = cli("history", "cli.small", "good", "--config", str(project.config), "--limit", "1", "--json")

    document = json.loads(result.stdout)
    assert (document["set"], document["retriever"], document["grader"]) == ("cli.small", "good", "retrieval_hit_rate")
    [latest] = document["runs"]
    assert latest["top1_hit_rate"] == 0.5 and latest["top1_delta"] == -0.5 and latest["complete"] is True
    assert latest["baseline_run_id"] is not None


def test_history_reads_the_store_option_without_a_configuration(cli, project, tmp_path):
    run(cli, project)

    result = cli("history", "cli.small", "good", "--store", str(project.store), "--config", str(tmp_path / "absent.yaml"))

    assert result.exit_code == 0 and "first run" in result.stdout


def test_history_of_an_unknown_pair_exits_1_listing_the_stored_ones(cli, project):
    run(cli, project)

    result = cli("history", "cli.small", "half", "--config", str(project.config))

    assert result.exit_code == 1
    assert "no stored runs of set 'cli.small' against retriever 'half'" in result.stderr
    assert "stored: cli.small × good" in result.stderr


def save_run(store: ResultStore, retriever: str, age_days: float, now: datetime) -> RunResult:
    question = QuestionResult("q1", "match", None, ("d1",), ("d1",), 1.0)
    result = RunResult("cli.small", retriever, (question,), run_at=now - timedelta(days=age_days))
    store.save(result)
    return result


def test_prune_removes_old_runs_keeps_the_latest_and_says_what_it_removed(cli, project):
    store = ResultStore(str(project.store))
    now = datetime.now(timezone.utc)
    oldest, old = save_run(store, "good", 40, now), save_run(store, "good", 35, now)
    save_run(store, "good", 1, now)
    lone = save_run(store, "half", 90, now)  # the only run of its key: always kept

    result = cli("prune", "--config", str(project.config))

    assert result.exit_code == 0, result.stderr
    assert f"Removed 2 run(s) older than 30 days from {project.store}" in result.stdout
    assert oldest.run_id in result.stdout and old.run_id in result.stdout and lone.run_id not in result.stdout
    assert len(store.history(HistoryKey("cli.small", "good"))) == 1
    assert len(store.history(HistoryKey("cli.small", "half"))) == 1

    again = cli("prune", "--config", str(project.config))
    assert again.exit_code == 0 and "Nothing to remove" in again.stdout


def test_prune_follows_the_configured_retention_or_the_option(cli, project):
    project.config.write_text(project.config.read_text() + "retention_days: 38\n")
    store = ResultStore(str(project.store))
    now = datetime.now(timezone.utc)
    oldest, old = save_run(store, "good", 40, now), save_run(store, "good", 35, now)
    save_run(store, "good", 1, now)

    by_config = cli("prune", "--config", str(project.config), "--json")

    assert [run["run_id"] for run in json.loads(by_config.stdout)["removed"]] == [oldest.run_id]
    by_option = cli("prune", "--config", str(project.config), "--older-than-days", "2", "--json")
    document = json.loads(by_option.stdout)
    assert document["older_than_days"] == 2 and [run["run_id"] for run in document["removed"]] == [old.run_id]


def test_prune_refuses_a_negative_age(cli, project):
    result = cli("prune", "--config", str(project.config), "--older-than-days", "-1")

    assert result.exit_code == 2 and "--older-than-days" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("history", "../../x/y", "z"),
        ("history", "cli.small", "../good"),
        ("run", "cli.small", "../../good"),
        ("run", "Cli.Small", "good"),
        ("compare", "cli.small", "good", "half/../../x"),
        ("accept", "../cli.small", "good", "20250102T030405678901Z-0123abcd"),
        ("import", "trec", "--identifier", "../escape", "--qrels", "q", "--topics", "t", "--out", "o.yaml"),
    ],
)
def test_an_identifier_that_could_name_a_path_outside_the_store_is_refused_in_one_line(cli, project, args):
    result = cli(*args, "--config", str(project.config)) if args[0] != "import" else cli(*args)

    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "must match ^[a-z0-9_]+" in result.stderr
    assert not project.store.exists()


@pytest.mark.parametrize("run_id", ["../../etc/passwd", "latest", "20250601T120000000000Z"])
def test_a_run_id_not_in_the_stores_format_is_refused_before_anything_runs(cli, project, run_id):
    pinned = cli("run", "cli.small", "good", "--config", str(project.config), "--baseline", run_id)
    accepted = cli("accept", "cli.small", "good", run_id, "--config", str(project.config))

    for result, name in ((pinned, "--baseline"), (accepted, "RUN_ID")):
        assert result.exit_code == 2 and result.stderr.count("\n") == 1
        assert f"{name}: run id" in result.stderr and "is not a run id of this store" in result.stderr
    assert not project.store.exists()


@pytest.mark.parametrize("days", ["nan", "inf", "-inf", "-1", "36501", "1e308"])
def test_prune_refuses_an_age_that_is_not_0_to_100_years_in_one_line(cli, project, days):
    save_run(ResultStore(str(project.store)), "good", 40, datetime.now(timezone.utc))
    result = cli("prune", "--config", str(project.config), "--older-than-days", days)

    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: --older-than-days must be a number of days from 0 to 36500, got {float(days)!r}\n"
    assert len(project.stored_summaries()) == 1


@pytest.mark.parametrize("days", [".inf", ".nan", "36501", "-3"])
def test_a_configured_retention_that_is_not_0_to_100_years_is_refused_in_one_line(cli, project, days):
    project.config.write_text(project.config.read_text() + f"retention_days: {days}\n")

    result = cli("prune", "--config", str(project.config))

    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and str(project.config) in result.stderr and "retention_days" in result.stderr


def test_prune_dry_run_says_what_it_would_remove_and_removes_nothing(cli, project):
    store = ResultStore(str(project.store))
    now = datetime.now(timezone.utc)
    old = save_run(store, "good", 40, now)
    save_run(store, "good", 1, now)

    result = cli("prune", "--config", str(project.config), "--dry-run")

    assert result.exit_code == 0, result.stderr
    assert f"Would remove 1 run(s) older than 30 days from {project.store}" in result.stdout
    assert old.run_id in result.stdout and "Dry run: nothing was removed." in result.stdout
    assert len(store.history(HistoryKey("cli.small", "good"))) == 2


def test_history_and_run_warn_in_one_line_naming_an_unreadable_file_and_carry_on(cli, project):
    run(cli, project)
    folder = project.store / "summaries" / HistoryKey("cli.small", "good").parts
    damaged = folder / "20991231T000000000000Z-0badf11e.parquet"
    damaged.write_bytes(b"")

    listed = cli("history", "cli.small", "good", "--config", str(project.config))
    again = run(cli, project)

    for result in (listed, again):
        assert result.exit_code == 0, result.stderr
        assert result.stderr.startswith(f"warning: skipped {damaged}: not a readable Parquet file")
        assert result.stderr.count("\n") == 1
    assert "first run" in listed.stdout and "Verdict: No regression" in again.stdout
