"""`retrieval-eval compare`: side by side, disagreements, paired McNemar p-values, exit codes."""

from __future__ import annotations

import json
import shutil

from cli_helpers import HALF, PERFECT


def compare(cli, project, *arguments):
    return cli("compare", "cli.small", *arguments, "--config", str(project.config), env={"COLUMNS": "200"})


def test_compare_shows_rates_breakdowns_disagreements_and_p_values(cli, project):
    result = compare(cli, project, "good", "half")

    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "reference good" in out
    assert "100.0% (2/2)" in out and "50.0% (1/2)" in out
    assert "-50.0 pp" in out and "1.000" in out  # one discordant question: p = 1
    assert "McNemar" in out
    assert "By form (top-1 / top-3)" in out and "By hard class (top-1 / top-3)" in out
    assert "Disagreements (1 questions" in out
    disagreement_rows = [line for line in out.splitlines() if line.startswith("│ q")]
    assert [row.split()[1] for row in disagreement_rows] == ["q2"]
    assert "d2, d3" in disagreement_rows[0]


def test_compare_does_not_save_unless_asked(cli, project):
    assert compare(cli, project, "good", "half").exit_code == 0
    assert not project.store.exists()

    result = compare(cli, project, "good", "half", "--save")

    assert result.exit_code == 0
    assert len(project.stored_summaries()) == 2
    assert "Saved run" in result.stdout and "of good" in result.stdout and "of half" in result.stdout
    assert result.stdout.count("No baseline: recorded as the baseline.") == 2
    again = compare(cli, project, "good", "half", "--save", "--json")
    runs = json.loads(again.stdout)["runs"]
    assert [run["regression_summary"] for run in runs] == ["No regression: top-1 +0.0 pp, top-3 +0.0 pp."] * 2
    assert all(run["run_id"] for run in runs) and len(project.stored_summaries()) == 4


def test_compare_save_leaves_unstable_questions_out_as_run_does(cli, project, tmp_path):
    """`good` hit q2, missed it and hit it again: under audit.exclude_unstable its next miss is left out."""
    project.config.write_text(project.config.read_text() + "audit:\n  exclude_unstable: true\n")
    for rankings in (PERFECT, HALF, PERFECT):
        project.rankings("good", rankings)
        assert cli("run", "cli.small", "good", "--config", str(project.config)).exit_code == 0
    project.rankings("good", HALF)
    copy = shutil.copytree(project.store, tmp_path / "copy")

    ran = cli("run", "cli.small", "good", "--config", str(project.config), "--store", str(copy), "--json")
    saved = compare(cli, project, "good", "half", "--save", "--json")

    summary = json.loads(ran.stdout)["regression"]["summary"]
    assert "Left out as unstable: 1 question(s) (q2)" in summary
    assert json.loads(saved.stdout)["runs"][0]["regression_summary"] == summary


def test_compare_json_has_runs_paired_tests_and_disagreements(cli, project):
    result = compare(cli, project, "good", "half", "--json")

    document = json.loads(result.stdout)
    assert document["set"] == "cli.small" and document["reference"] == "good" and document["saved"] is False
    assert [run["run_id"] for run in document["runs"]] == [None, None]
    assert [run["retriever"] for run in document["runs"]] == ["good", "half"]
    assert [run["top1_hit_rate"] for run in document["runs"]] == [1.0, 0.5]
    assert document["runs"][0]["by_form"]["gap"]["top1_hit_rate"] == 1.0
    tests = {(t["retriever"], t["measure"]): t for t in document["paired_tests"]}
    assert set(tests) == {("half", key) for key in ("top1", "top3", "mrr@3", "ndcg@3", "recall@1", "recall@3")}
    assert tests[("half", "top1")] == {
        "reference": "good",
        "retriever": "half",
        "measure": "top1",
        "k": 1,
        "reference_only_hits": 1,
        "retriever_only_hits": 0,
        "delta": -0.5,
        "delta_interval": None,
        "p_value": 1.0,
        "corrected_p_value": 1.0,
    }
    assert tests[("half", "mrr@3")]["delta_interval"] == [-1.0, 0.0]  # resampling two questions, one lost
    assert document["significance"] == 0.05
    slices = document["slice_tests"]["half"]
    assert [(t["slice"], t["key"], t["k"]) for t in slices][:2] == [("overall", "all", 1), ("overall", "all", 3)]
    assert {(t["slice"], t["key"]) for t in slices} >= {("form", "gap"), ("hard_class", "near-duplicate")}
    assert not any(t["survives_correction"] for t in slices)  # one flipped question of two is never significant
    [disagreement] = document["disagreements"]
    assert disagreement["id"] == "q2" and disagreement["expected_document_ids"] == ["d2", "d3"]
    assert disagreement["results"]["good"]["top1_hit"] is True
    assert disagreement["results"]["half"]["retrieved_document_ids"] == ["x", "y", "z"]


def test_retrievers_that_agree_have_no_disagreements(cli, project):
    project.rankings("half", PERFECT)

    result = compare(cli, project, "good", "half")

    assert result.exit_code == 0
    assert "agree on every question" in result.stdout


def test_compare_with_three_retrievers_tests_each_against_the_first(cli, project):
    result = compare(cli, project, "half", "good", "flaky", "--json")

    assert result.exit_code == 3  # flaky errors on q2
    document = json.loads(result.stdout)
    assert {(t["reference"], t["retriever"]) for t in document["paired_tests"]} == {("half", "good"), ("half", "flaky")}
    flaky = next(t for t in document["paired_tests"] if t["retriever"] == "flaky" and t["measure"] == "top1")
    assert (flaky["reference_only_hits"], flaky["retriever_only_hits"]) == (0, 0)  # q2 errored: left out
    assert "incomplete run: flaky: 1 of 2 questions failed (q2): returned NoneType None" in result.stderr


def test_compare_needs_two_distinct_retrievers(cli, project):
    one = compare(cli, project, "good")
    assert one.exit_code == 2 and "at least two retrievers" in one.stderr

    twice = compare(cli, project, "good", "good")
    assert twice.exit_code == 2 and "more than once" in twice.stderr


def test_compare_with_an_unknown_retriever_exits_1_before_running_anything(cli, project):
    result = compare(cli, project, "good", "nope")

    assert result.exit_code == 1
    assert result.stderr.strip() == "error: unknown retriever 'nope'; available: flaky, good, half"
    assert result.stdout == ""


def test_compare_limit_caps_the_listed_disagreements(cli, project):
    project.rankings("half", {"alpha question": ["x"], "beta question": ["x"]})

    result = compare(cli, project, "good", "half", "--limit", "1")

    assert "Disagreements (2 questions" in result.stdout
    assert "… and 1 more" in result.stdout
