"""`run` over an edited set says what changed; `accept` and `history` under `baseline_policy: accepted`."""

from __future__ import annotations

import json

import yaml
from cli_helpers import HALF, SMALL_SET

from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

KEY = HistoryKey("cli.small", "good")


def run(cli, project, *options):
    return cli("run", "cli.small", "good", "--config", str(project.config), "--show", "none", *options)


def edit_config(project, **changes) -> None:
    config = yaml.safe_load(project.config.read_text(encoding="utf-8"))
    project.config.write_text(yaml.safe_dump({**config, **changes}, sort_keys=False), encoding="utf-8")


def relabel_q2_and_add_q3(project) -> None:
    data = json.loads(json.dumps(SMALL_SET))
    data["questions"][1]["expected_document_ids"] = ["d2"]
    data["questions"].append({"id": "q3", "question": "gamma question", "form": "match", "expected_document_ids": ["d9"]})
    (project.root / "small.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def test_json_reports_set_changes_only_when_there_is_a_baseline(cli, project):
    first = json.loads(run(cli, project, "--json").stdout)
    assert "set_changes" not in first and first["regression"]["verdict"] == "baseline"
    assert first["baseline_policy"] == "previous" and len(first["set_fingerprint"]) == 16
    relabel_q2_and_add_q3(project)

    second = json.loads(run(cli, project, "--json").stdout)

    assert second["set_changes"] == {
        "added": ["q3"],
        "removed": [],
        "relabelled": ["q2"],
        "rescored": ["q2"],
        "not_rescored": None,
        "not_rescored_questions": [],
        "compared": 2,
        "matched_by": "fingerprint",
    }
    assert second["regression"]["verdict"] == "pass" and second["regression"]["top1_delta"] == 0.0
    assert second["top1_hit_rate"] == 1 / 3  # q3 misses: the headline rate is over all current questions
    assert second["set_fingerprint"] != first["set_fingerprint"]


def test_the_report_says_how_the_set_changed_since_the_baseline(cli, project):
    run(cli, project)
    relabel_q2_and_add_q3(project)

    result = run(cli, project)

    assert result.exit_code == 0, result.stderr
    assert "Set changed since the baseline: 1 added, 1 relabelled; compared on 2 questions." in result.stdout
    assert (
        "Verdict: No regression on the 2 compared questions: top-1 +0.0 pp, top-3 +0.0 pp. "
        "Baseline rescored under the current labels: 1 relabelled question kept."
    ) in " ".join(result.stdout.split())


def test_too_few_unchanged_questions_exits_0_saying_the_runs_are_not_comparable(cli, project):
    edit_config(project, tolerances={"min_compared_questions": 3})
    run(cli, project)
    relabel_q2_and_add_q3(project)

    result = run(cli, project, "--fail-on-regression", "--json")

    assert result.exit_code == 0, result.stderr
    regression = json.loads(result.stdout)["regression"]
    assert regression["verdict"] == "not_comparable" and regression["is_regression"] is False
    assert regression["summary"].startswith("Not comparable: only 2 compared question(s)")


def test_under_accepted_a_regression_keeps_failing_until_accepted(cli, project):
    edit_config(project, baseline_policy="accepted")
    first = json.loads(run(cli, project, "--json").stdout)
    project.rankings("good", HALF)
    regressed = json.loads(run(cli, project, "--json").stdout)
    assert regressed["regression"]["verdict"] == "regression"
    assert run(cli, project, "--fail-on-regression").exit_code == 1  # still compared with the first run

    accepted = cli("accept", "cli.small", "good", regressed["run_id"], "--config", str(project.config), "--by", "ann")

    assert accepted.exit_code == 0, accepted.stderr
    assert f"Accepted run {regressed['run_id']} of cli.small × good by ann" in accepted.stdout
    after = json.loads(run(cli, project, "--json", "--fail-on-regression").stdout)
    assert after["regression"]["baseline_run_id"] == regressed["run_id"] and after["regression"]["verdict"] == "pass"
    history = json.loads(cli("history", "cli.small", "good", "--config", str(project.config), "--json").stdout)["runs"]
    statuses = {row["run_id"]: row["status"] for row in history}
    assert statuses[regressed["run_id"]] == "regression, accepted by ann"
    assert statuses[after["run_id"]] == "pass, baseline"
    assert statuses[first["run_id"]] == "first run"
    table = cli("history", "cli.small", "good", "--config", str(project.config), env={"COLUMNS": "160"}).stdout
    assert "regression, accepted by ann" in table and "pass, baseline" in table


def test_accept_refuses_an_unknown_or_incomplete_run_with_exit_1_and_records_nothing(cli, project):
    run(cli, project)
    project.rankings("good", {"alpha question": ["d1"], "beta question": None})
    run(cli, project)
    incomplete = next(r for r in ResultStore(str(project.store)).history(KEY) if not r.complete)

    unknown = cli("accept", "cli.small", "good", "20260101T000000000000Z-0badf11e", "--config", str(project.config))
    refused = cli("accept", "cli.small", "good", incomplete.run_id, "--store", str(project.store))

    assert unknown.exit_code == 1 and "unknown run of cli.small/good/retrieval_hit_rate" in unknown.stderr
    assert refused.exit_code == 1 and "is incomplete" in refused.stderr and "cannot be accepted" in refused.stderr
    assert not (project.store / "acceptances").exists()


def test_accept_json_names_who_and_when(cli, project, monkeypatch):
    monkeypatch.setenv("USER", "ci-bot")
    stored = json.loads(run(cli, project, "--json").stdout)

    result = cli("accept", "cli.small", "good", stored["run_id"], "--store", str(project.store), "--json")

    document = json.loads(result.stdout)
    assert (document["run_id"], document["accepted_by"]) == (stored["run_id"], "ci-bot")
    assert document["accepted_at"].endswith("+00:00")


def test_prune_keeps_the_accepted_baseline_however_old(cli, project):
    edit_config(project, baseline_policy="accepted")
    accepted = json.loads(run(cli, project, "--json").stdout)["run_id"]
    project.rankings("good", HALF)
    regressions = [json.loads(run(cli, project, "--json").stdout)["run_id"] for _ in range(2)]

    result = cli("prune", "--older-than-days", "0", "--config", str(project.config), "--json")

    assert [row["run_id"] for row in json.loads(result.stdout)["removed"]] == [regressions[0]]
    kept = [stored.run_id for stored in ResultStore(str(project.store)).history(KEY)]
    assert kept == [regressions[1], accepted]
    assert json.loads(run(cli, project, "--json").stdout)["regression"]["baseline_run_id"] == accepted


def test_history_rescore_shows_every_run_under_the_current_labels_and_says_so(cli, project):
    run(cli, project)
    data = json.loads(json.dumps(SMALL_SET))
    data["questions"][1]["expected_document_ids"] = ["nowhere"]
    (project.root / "small.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    run(cli, project)
    history = ("history", "cli.small", "good", "--config", str(project.config))

    stored = json.loads(cli(*history, "--json").stdout)
    rescored = json.loads(cli(*history, "--json", "--rescore").stdout)
    table = cli(*history, "--rescore", env={"COLUMNS": "200"}).stdout

    assert [row["top1_hit_rate"] for row in stored["runs"]] == [0.5, 1.0] and stored["labels"] == "stored"
    assert [row["top1_hit_rate"] for row in rescored["runs"]] == [0.5, 0.5] and rescored["labels"] == "current"
    assert [row["rescored_questions"] for row in rescored["runs"]] == [[], ["q2"]]
    assert "Every run under the current labels of cli.small, rescored from its stored ids." in table
    assert "1 relabelled rescored" in table


def test_history_rescore_names_each_runs_questions_that_could_not_be_rescored_and_why(cli, project):
    run(cli, project)
    data = json.loads(json.dumps(SMALL_SET))
    data["questions"][1]["question"] = "beta question, reworded"
    (project.root / "small.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    run(cli, project)
    history = ("history", "cli.small", "good", "--config", str(project.config))

    rescored = json.loads(cli(*history, "--json", "--rescore").stdout)
    stored = json.loads(cli(*history, "--json").stdout)
    table = cli(*history, "--rescore", env={"COLUMNS": "200"}).stdout

    newest, oldest = rescored["runs"]
    reworded = "asked with another text: its stored ranking answered another question"
    assert newest["not_rescored_questions"] == []
    assert oldest["not_rescored_questions"] == [{"question_id": "q2", "reason": reworded}]
    assert oldest["question_count"] == 1 and oldest["not_rescored"] is None
    assert all("not_rescored_questions" not in row for row in stored["runs"])
    assert f"{oldest['run_id']}: not rescored, left out of its figures: q2 ({reworded})." in table.splitlines()
    assert newest["run_id"] + ":" not in table


def judge_x_relevant_for_q2(project) -> None:
    """A judging round found `x`, which `good` ranks first for q2, relevant: q2's top-1 turns into a hit."""
    data = json.loads(json.dumps(SMALL_SET))
    data["questions"][1]["expected_document_ids"] = ["d2", "d3", "x"]
    (project.root / "small.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def test_after_labels_grow_run_report_and_history_set_the_rescored_baseline_beside_the_change_it_came_from(
    cli, project, tmp_path
):
    project.rankings("good", {"alpha question": ["d1"], "beta question": ["x", "d3"]})  # top-1 50.0%
    run(cli, project)
    judge_x_relevant_for_q2(project)
    summary = tmp_path / "summary.md"

    document = json.loads(run(cli, project, "--json", "--markdown", str(summary)).stdout)
    history = ("history", "cli.small", "good", "--config", str(project.config))
    table = cli(*history, env={"COLUMNS": "200"}).stdout
    newest, first = json.loads(cli(*history, "--json").stdout)["runs"]
    page = tmp_path / "report.html"
    cli("report", "cli.small", "good", "--config", str(project.config), "--html", str(page))

    regression = document["regression"]
    assert (document["top1_hit_rate"], regression["top1_delta"]) == (1.0, 0.0)
    assert regression["baseline_rescored"] is True
    assert (regression["baseline_figures"]["top1"], regression["baseline_figures_as_stored"]["top1"]) == (1.0, 0.5)
    assert "| top-1 hit rate | 100.0% (2/2), 95% CI 34.2–100.0% | 100.0% rescored (50.0% as stored) | +0.0 pp |" in (
        summary.read_text(encoding="utf-8")
    )
    assert "<td>top-1 hit rate</td>" in page.read_text(encoding="utf-8")
    assert '<td class="n">100.0% rescored (50.0% as stored)</td><td class="n">+0.0 pp</td>' in page.read_text(encoding="utf-8")
    assert (first["top1_hit_rate"], newest["top1_hit_rate"], newest["top1_delta"]) == (0.5, 1.0, 0.0)
    assert (newest["top1_baseline_rescored"], newest["top1_baseline_stored"]) == (1.0, 0.5)
    assert first["top1_baseline_rescored"] is None
    assert "+0.0 pp*" in table
    assert (
        f"* {newest['run_id']}: Δ against its baseline rescored under its labels: "
        "top-1 100.0% (50.0% as stored), top-3 100.0% (100.0% as stored)."
    ) in table.splitlines()
