"""`retrieval-eval run`: the record's command cases, JSON output, exit codes, and bad input."""

from __future__ import annotations

import json

import pytest
from cli_helpers import HALF, PERFECT

from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

JSON_FIELDS = {
    "set",
    "retriever",
    "grader",
    "run_id",
    "question_count",
    "top1_hit_count",
    "top1_hit_rate",
    "top3_hit_count",
    "top3_hit_rate",
    "by_form",
    "by_hard_class",
    "complete",
    "questions",
    "regression",
    "intervals",
    "metrics",
    "latency_mode",
    "latency_ms",
}
QUESTION_FIELDS = {
    "id",
    "form",
    "hard_class",
    "expected_document_ids",
    "retrieved_document_ids",
    "top1_hit",
    "top3_hit",
    "latency_ms",
    "error",
    "metrics",
}
REGRESSION_FIELDS = {
    "has_baseline",
    "top1_delta",
    "top3_delta",
    "is_regression",
    "summary",
    "flipped_to_miss",
    "flipped_to_hit",
    "is_inconclusive",
    "slice_tests",
    "significance",
    "minimum_detectable_drop",
    "metric_deltas",
}


def run(cli, project, retriever="good", *options):
    return cli("run", "cli.small", retriever, "--config", str(project.config), *options)


def test_a_perfect_run_prints_full_rates_and_persists_with_grader_and_retriever(cli, project):
    result = run(cli, project)

    assert result.exit_code == 0, result.stderr
    assert "Top-1 hit rate: 100.0% (2/2)" in result.stdout
    assert "Top-3 hit rate: 100.0% (2/2)" in result.stdout
    assert "By form" in result.stdout and "By hard class" in result.stdout
    assert "near-duplicate" in result.stdout and "gap" in result.stdout
    store = ResultStore(str(project.store))
    [stored] = store.history(HistoryKey("cli.small", "good"))
    assert f"Saved run {stored.run_id}" in result.stdout
    saved = store.load(stored)
    assert (saved.grader, saved.retriever_identifier, saved.set_identifier) == ("retrieval_hit_rate", "good", "cli.small")
    assert saved.hit_rate(1) == 1.0 and saved.hit_rate(3) == 1.0


def test_the_first_run_is_recorded_as_the_baseline(cli, project):
    result = run(cli, project)

    assert result.exit_code == 0
    assert "No baseline: recorded as the baseline." in result.stdout
    assert result.stderr == ""


def test_per_question_rows_show_hits_ids_and_latency(cli, project):
    project.rankings("good", HALF)
    result = run(cli, project, "good", "--show", "all")

    rows = {line.split()[1]: line for line in result.stdout.splitlines() if line.startswith("│ q")}
    assert "✓" in rows["q1"] and "d1" in rows["q1"]
    assert rows["q2"].count("✗") == 2 and "x, y, z" in rows["q2"]
    misses = run(cli, project, "good", "--show", "misses")
    assert "│ q2" in misses.stdout and "│ q1" not in misses.stdout
    none = run(cli, project, "good", "--show", "none")
    assert "│ q" not in none.stdout and "Top-1 hit rate: 50.0% (1/2)" in none.stdout


def test_a_regression_without_the_flag_exits_0_with_a_warning(cli, project):
    assert run(cli, project).exit_code == 0
    project.rankings("good", HALF)

    result = run(cli, project)

    assert result.exit_code == 0
    assert "Regression: top-1 hit rate dropped 50.0 pp" in result.stdout
    assert result.stderr.startswith("warning: Regression:")
    assert "Flipped hit → miss (1, 1 with unjudged documents in their place): q2" in result.stdout
    assert "McNemar" in result.stdout and "p = 1.000" in result.stdout
    assert "-100.0 pp" in result.stdout  # the per-form and per-class deltas (one question each)
    assert len(project.stored_summaries()) == 2


def test_a_regression_with_the_flag_exits_1(cli, project):
    run(cli, project)
    project.rankings("good", HALF)

    result = run(cli, project, "good", "--fail-on-regression")

    assert result.exit_code == 1
    assert result.stderr.startswith("error: Regression: top-1 hit rate dropped 50.0 pp (tolerance 10.0 pp)")
    assert len(project.stored_summaries()) == 2  # the failing run is still recorded


def test_a_pinned_baseline_makes_a_rerun_of_a_failed_gate_fail_again(cli, project):
    run(cli, project)
    [before] = ResultStore(str(project.store)).history(HistoryKey("cli.small", "good"))
    project.rankings("good", HALF)
    assert run(cli, project, "good", "--fail-on-regression").exit_code == 1

    latest = run(cli, project, "good", "--fail-on-regression")
    pinned = run(cli, project, "good", "--fail-on-regression", "--baseline", before.run_id)

    assert latest.exit_code == 0  # compared with the regressed run: no change
    assert pinned.exit_code == 1 and "top-1 hit rate dropped 50.0 pp" in pinned.stderr


def test_an_unknown_pinned_baseline_exits_1_listing_the_complete_runs(cli, project):
    run(cli, project)
    [stored] = ResultStore(str(project.store)).history(HistoryKey("cli.small", "good"))

    result = run(cli, project, "good", "--baseline", "20990101T000000000000Z-deadbeef")

    assert result.exit_code == 1
    assert (
        f"unknown complete run of cli.small/good/retrieval_hit_rate '20990101T000000000000Z-deadbeef'; available: {stored.run_id}"
        in result.stderr
    )
    assert len(project.stored_summaries()) == 1


def test_a_50_pp_drop_with_tolerances_of_half_is_no_regression(cli, project):
    run(cli, project)
    project.rankings("good", HALF)

    result = run(cli, project, "good", "--max-top1-drop", "0.5", "--max-top3-drop", "0.5", "--fail-on-regression")

    assert result.exit_code == 0, result.stderr
    assert "No regression: top-1 -50.0 pp, top-3 -50.0 pp." in result.stdout
    assert result.stderr == ""


def test_tolerances_default_to_the_configuration(cli, project):
    config = project.config.read_text() + "tolerances:\n  max_top1_drop: 0.5\n  max_top3_drop: 0.5\n"
    project.config.write_text(config)
    run(cli, project)
    project.rankings("good", HALF)

    result = run(cli, project, "good", "--fail-on-regression")

    assert result.exit_code == 0 and "No regression" in result.stdout


@pytest.mark.parametrize("option", ["--max-top1-drop", "--max-top3-drop"])
@pytest.mark.parametrize("value", ["-0.1", "nan", "inf", "1.5"])
def test_a_tolerance_outside_0_to_1_exits_2_on_one_line_before_anything_is_saved(cli, project, option, value):
    result = run(cli, project, "good", option, value)

    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and option in result.stderr
    assert "must be a fraction from 0 to 1" in result.stderr
    assert not project.store.exists()


def test_a_tolerance_given_in_percentage_points_gets_the_fraction_it_meant(cli, project):
    result = run(cli, project, "good", "--max-top1-drop", "10")

    assert result.exit_code == 2 and "did you mean 0.10?" in result.stderr
    assert not project.store.exists()


@pytest.mark.parametrize(
    ("set_identifier", "retriever", "expected"),
    [
        ("cli.nope", "good", "unknown question set 'cli.nope'; available: cli.small"),
        ("cli.small", "nope", "unknown retriever 'nope'; available: flaky, good, half"),
        ("cli.smal", "good", "unknown question set 'cli.smal' (did you mean 'cli.small'?); available: cli.small"),
        ("cli.small", "goood", "unknown retriever 'goood' (did you mean 'good'?); available: flaky, good, half"),
    ],
)
def test_an_unknown_set_or_retriever_exits_1_listing_the_available_ones_and_the_closest(
    cli, project, set_identifier, retriever, expected
):
    result = cli("run", set_identifier, retriever, "--config", str(project.config))

    assert result.exit_code == 1
    assert result.stderr.strip() == f"error: {expected}"
    assert result.stdout == ""
    assert not project.store.exists()


def test_json_is_exactly_one_object_with_every_field(cli, project):
    result = run(cli, project, "good", "--json")

    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert JSON_FIELDS <= set(document)
    assert (document["set"], document["retriever"], document["grader"]) == ("cli.small", "good", "retrieval_hit_rate")
    assert (document["question_count"], document["top1_hit_count"], document["top1_hit_rate"]) == (2, 2, 1.0)
    assert (document["top3_hit_count"], document["top3_hit_rate"], document["complete"]) == (2, 1.0, True)
    one_of_one = [pytest.approx(0.2065, abs=1e-4), 1.0]  # Wilson 95% on 1 hit of 1 question
    # q2 (gap) expects d2 and d3 and gets d3, d2: only one of its two documents is in the top 1.
    metrics = {
        "match": {"mrr@3": 1.0, "ndcg@3": 1.0, "recall@1": 1.0, "recall@3": 1.0, "judged@1": 1.0, "judged@3": 0.5},
        "gap": {"mrr@3": 1.0, "ndcg@3": 1.0, "recall@1": 0.5, "recall@3": 1.0, "judged@1": 1.0, "judged@3": 1.0},
    }
    for form, judged in (("match", (1.0, 0.5)), ("gap", (1.0, 1.0))):  # no machine labels: judged_any@k is judged@k
        metrics[form] |= {"judged_any@1": judged[0], "judged_any@3": judged[1]}
    assert document["by_form"] == {
        form: {
            "questions": 1,
            "top1_hit_rate": 1.0,
            "top3_hit_rate": 1.0,
            "intervals": {"top1": one_of_one, "top3": one_of_one},
            "metrics": metrics[form],
        }
        for form in ("match", "gap")
    }
    assert document["intervals"] == {
        "top1": [pytest.approx(0.3424, abs=1e-4), 1.0],
        "top3": [pytest.approx(0.3424, abs=1e-4), 1.0],
    }
    assert document["metrics"] == {
        "mrr@3": 1.0,
        "ndcg@3": 1.0,
        "recall@1": 0.75,
        "recall@3": 1.0,
        "judged@1": 1.0,
        "judged@3": 0.75,  # q1's second document, x, was never judged
        "judged_any@1": 1.0,
        "judged_any@3": 0.75,
    }
    assert [q["unjudged_document_ids"] for q in document["questions"]] == [["x"], []]
    assert [q["metrics"] for q in document["questions"]] == [metrics["match"], metrics["gap"]]
    assert list(document["by_hard_class"]) == ["normal", "near-duplicate"]
    assert [set(q) >= QUESTION_FIELDS for q in document["questions"]] == [True, True]
    q2 = document["questions"][1]
    assert q2["expected_document_ids"] == ["d2", "d3"] and q2["retrieved_document_ids"] == ["d3", "d2"]
    assert q2["top1_hit"] is True and q2["error"] is None and q2["latency_ms"] >= 0
    assert REGRESSION_FIELDS <= set(document["regression"])
    assert document["regression"]["has_baseline"] is False
    assert document["run_id"] == ResultStore(str(project.store)).history(HistoryKey("cli.small", "good"))[0].run_id


def test_json_of_a_regression_has_deltas_and_flipped_questions(cli, project):
    run(cli, project)
    project.rankings("good", HALF)

    result = run(cli, project, "good", "--json")

    document = json.loads(result.stdout)
    regression = document["regression"]
    assert regression["has_baseline"] and regression["is_regression"]
    assert regression["top1_delta"] == -0.5 and regression["top3_delta"] == -0.5
    assert regression["flipped_to_miss"] == ["q2"] and regression["flipped_to_hit"] == []
    assert regression["by_form"]["gap"]["top1_delta"] == -1.0
    assert result.stderr.startswith("warning: ")


def test_whatever_a_retriever_prints_stays_off_stdout(cli, project):
    config = project.config.read_text().replace("rankings: good.json", "rankings: good.json\n    print: true")
    project.config.write_text(config)

    result = run(cli, project, "good", "--json")

    assert json.loads(result.stdout)["top1_hit_count"] == 2
    assert "chatty retriever asked" in result.stderr


def test_an_incomplete_run_exits_3_and_is_stored_for_inspection(cli, project):
    result = run(cli, project, "flaky")

    assert result.exit_code == 3
    assert result.stderr.startswith("error: incomplete run: 1 of 2 questions failed (q2): returned NoneType None;")
    assert "Incomplete run" in result.stdout
    assert [p.name.endswith(".incomplete.parquet") for p in project.stored_summaries()] == [True]


def test_an_incomplete_run_in_json_is_still_one_object(cli, project):
    result = run(cli, project, "flaky", "--json")

    assert result.exit_code == 3
    document = json.loads(result.stdout)
    assert document["complete"] is False
    assert document["questions"][1]["error"].startswith("returned NoneType")
    assert document["questions"][1]["top1_hit"] is None


def test_a_closed_port_makes_an_http_retriever_run_incomplete(cli, project):
    pytest.importorskip("retrieval_pipeline.retrievers.http.retriever")
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = project.config.read_text() + (
        f"  down:\n    kind: http\n    url: http://127.0.0.1:{port}/search\n    retries: 0\n    timeout_seconds: 1\n"
    )
    project.config.write_text(config)

    result = run(cli, project, "down")

    assert result.exit_code == 3, result.stderr
    assert result.stderr.startswith(
        f"error: incomplete run: 2 of 2 questions failed: connection refused (POST http://127.0.0.1:{port}/search, 1 attempt)"
    )
    assert "Traceback" not in result.stderr


def test_an_invalid_configuration_exits_2_naming_file_and_key(cli, project):
    project.config.write_text(project.config.read_text() + "tolerances:\n  max_top1_drop: -1\n")

    result = run(cli, project)

    assert result.exit_code == 2
    assert str(project.config) in result.stderr and "tolerances" in result.stderr and "max_top1_drop" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_unknown_configuration_key_exits_2(cli, project):
    project.config.write_text(project.config.read_text() + "retension_days: 3\n")

    result = run(cli, project)

    assert result.exit_code == 2 and "retension_days" in result.stderr and "not a known key" in result.stderr


def test_a_missing_configuration_exits_2(cli, project, tmp_path):
    result = cli("run", "cli.small", "good", "--config", str(tmp_path / "missing.yaml"))

    assert result.exit_code == 2
    assert "missing.yaml" in result.stderr and "cannot read" in result.stderr


def test_the_configuration_comes_from_the_environment(cli, project):
    result = cli("run", "cli.small", "good", env={"RETRIEVAL_EVAL_CONFIG": str(project.config)})

    assert result.exit_code == 0 and "100.0% (2/2)" in result.stdout


def test_a_malformed_set_file_exits_2_naming_file_question_and_field(cli, project):
    (project.root / "small.yaml").write_text(
        "identifier: cli.small\nname: x\nquestions:\n- id: q1\n  question: a\n  form: sideways\n  expected_document_ids: []\n"
    )

    result = run(cli, project)

    assert result.exit_code == 2
    assert "small.yaml" in result.stderr and "question 'q1'" in result.stderr and "form" in result.stderr


def test_an_unknown_retriever_kind_exits_2(cli, project):
    project.config.write_text(project.config.read_text() + "  odd:\n    kind: no_such_kind\n")

    result = run(cli, project, "odd")

    assert result.exit_code == 2 and "no_such_kind" in result.stderr and "retrievers.odd" in result.stderr


def test_a_plugin_bug_is_one_line_not_a_traceback(cli, project):
    project.config.write_text(project.config.read_text() + "  boom:\n    kind: cli_exploding\n")

    result = run(cli, project, "boom")

    assert result.exit_code == 4
    assert result.stderr.strip() == (
        "error: internal error: RuntimeError: plugin bug while building (set RETRIEVAL_EVAL_DEBUG=1 to see the traceback)"
    )


def test_an_unusable_store_exits_2(cli, project, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store should be")

    result = run(cli, project, "good", "--store", str(blocker / "store"))

    assert result.exit_code == 2
    assert result.stderr.startswith("error: cannot") and "result store" in result.stderr


def test_store_option_overrides_the_configuration(cli, project, tmp_path):
    result = run(cli, project, "good", "--store", str(tmp_path / "elsewhere"))

    assert result.exit_code == 0
    assert not project.store.exists()
    assert list((tmp_path / "elsewhere").glob("summaries/cli.small/good/retrieval_hit_rate/*.parquet"))
    assert str(tmp_path / "elsewhere") in result.stdout


def test_perfect_rankings_stay_perfect_for_sanity(cli, project):
    project.rankings("half", PERFECT)

    result = run(cli, project, "half", "--json")

    assert json.loads(result.stdout)["top3_hit_rate"] == 1.0


def test_long_flipped_lists_and_tiny_p_values_read_well():
    from retrieval_pipeline.cli.render.terminal import id_sequence
    from retrieval_pipeline.core.base.formatting import p_phrase, signed_pp

    assert id_sequence([f"q{i}" for i in range(25)]).endswith("q19 … (+5 more; --json lists all)")
    assert id_sequence([]) == "—"
    assert (p_phrase(0.0004), p_phrase(0.25)) == ("p < 0.001", "p = 0.250")
    assert signed_pp(-0.00001) == "+0.0 pp"  # never "-0.0 pp"


LEAKED = "tok-cli-5e1b77a0c94d\n"


@pytest.mark.slow
@pytest.mark.parametrize("at_build", [False, True], ids=["error-on-every-question", "error-while-building"])
@pytest.mark.parametrize("as_json", [False, True], ids=["plain", "json"])
def test_a_secret_a_plugin_quotes_in_its_errors_never_reaches_stdout_stderr_or_the_store(
    cli, project, monkeypatch, at_build, as_json
):
    monkeypatch.setenv("CLI_LEAKY_TOKEN", LEAKED)
    project.config.write_text(
        project.config.read_text()
        + f"  leaky:\n    kind: cli_leaky\n    token: {{env: CLI_LEAKY_TOKEN}}\n    at_build: {str(at_build).lower()}\n"
    )

    result = run(cli, project, "leaky", *(["--json"] if as_json else []))

    assert result.exit_code == (4 if at_build else 3), result.stderr
    assert "***" in result.stderr
    stored = b"".join(path.read_bytes() for path in project.store.rglob("*") if path.is_file()) if project.store.exists() else b""
    for form in (LEAKED, LEAKED.strip(), repr(LEAKED)[1:-1]):
        assert form not in result.stdout and form not in result.stderr
        assert form.encode() not in stored
    if not at_build:
        store = ResultStore(str(project.store))
        [entry] = store.history(HistoryKey("cli.small", "leaky"))
        assert {q.error for q in store.load(entry).questions} == {
            "ValueError: the service refused the token *** (after 3 attempts)"
        }
