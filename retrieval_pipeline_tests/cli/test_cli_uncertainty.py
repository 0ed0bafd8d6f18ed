"""The command line's uncertainty figures: intervals, inconclusive verdicts, and latency under its real name."""

from __future__ import annotations

import json

import yaml
from cli_helpers import PERFECT


def configure(project, **changes) -> None:
    config = yaml.safe_load(project.config.read_text(encoding="utf-8"))
    config.update(changes)
    project.config.write_text(yaml.safe_dump(config), encoding="utf-8")


def with_lexical_retriever(project, **changes) -> None:
    """`bm25` answers in batches (the lexical retriever), `good` one question at a time."""
    corpus = [{"_id": "d1", "text": "alpha words"}, {"_id": "d2", "text": "beta words"}, {"_id": "d3", "text": "gamma"}]
    (project.root / "corpus.jsonl").write_text("\n".join(json.dumps(doc) for doc in corpus), encoding="utf-8")
    config = yaml.safe_load(project.config.read_text(encoding="utf-8"))
    configure(project, retrievers={**config["retrievers"], "bm25": {"kind": "lexical", "corpus": "corpus.jsonl"}}, **changes)


def run(cli, project, retriever, *options):
    return cli("run", "cli.small", retriever, "--config", str(project.config), *options)


def test_the_report_gives_a_95_percent_interval_for_every_rate_and_the_ranking_metrics(cli, project):
    result = run(cli, project, "good", "--show", "none")
    assert "Top-1 hit rate: 100.0% (2/2), 95% CI 34.2–100.0%" in result.stdout
    assert "Ranking: MRR@3 1.000 · nDCG@3 1.000 · Recall@1 0.750 · Recall@3 1.000" in result.stdout


def test_an_unprovable_drop_is_inconclusive_exit_0_with_a_warning_or_exit_1_when_asked(cli, project):
    configure(project, tolerances={"min_significance": 0.05})
    run(cli, project, "good")
    project.rankings("good", {"alpha question": ["d1"], "beta question": ["x"]})  # top-1 and top-3 fall 50 pp

    warned = run(cli, project, "good", "--json")
    document = json.loads(warned.stdout)
    assert warned.exit_code == 0 and warned.stderr.startswith("warning: Inconclusive: top-1 hit rate dropped 50.0 pp")
    assert document["regression"]["is_inconclusive"] is True and document["regression"]["is_regression"] is False
    assert document["regression"]["minimum_detectable_drop"] is None  # two questions can never show a drop
    assert document["regression"]["tolerances"]["min_significance"] == 0.05

    project.rankings("good", {"alpha question": ["d1"], "beta question": ["d2"]})
    run(cli, project, "good")
    project.rankings("good", {"alpha question": ["d1"], "beta question": ["x"]})
    failed = run(cli, project, "good", "--fail-on-inconclusive", "--fail-on-regression")
    assert failed.exit_code == 1 and failed.stderr.startswith("error: Inconclusive:")
    assert "Set too small: on 2 compared questions no drop can reach significance 0.05" in failed.stdout


def test_without_min_significance_the_same_drop_is_a_regression_as_before(cli, project):
    run(cli, project, "good")
    project.rankings("good", {"alpha question": ["d1"], "beta question": ["x"]})
    result = run(cli, project, "good", "--fail-on-regression", "--fail-on-inconclusive")
    assert result.exit_code == 1 and result.stderr.startswith("error: Regression: top-1 hit rate dropped 50.0 pp")


def test_a_batch_retriever_reports_its_mean_per_question_and_no_percentiles(cli, project):
    with_lexical_retriever(project)
    result = run(cli, project, "bm25", "--json")
    document = json.loads(result.stdout)
    assert result.exit_code == 0, result.stderr
    assert document["latency_mode"] == "batch_mean" and list(document["latency_ms"]) == ["batch_mean"]
    text = run(cli, project, "bm25", "--show", "none").stdout
    assert "Latency: batch mean" in text and "p95" not in text
    per_question = json.loads(run(cli, project, "good", "--json").stdout)
    assert per_question["latency_mode"] == "per_question" and {"p50", "p95", "max"} <= set(per_question["latency_ms"])


def test_a_p95_tolerance_on_a_batch_retriever_is_refused_before_anything_runs(cli, project):
    with_lexical_retriever(project, tolerances={"max_p95_latency_increase_ms": 5.0})
    result = run(cli, project, "bm25")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"error: {project.config.resolve()}: tolerances: field 'max_p95_latency_increase_ms': ")
    assert "retriever 'bm25' answers in batches" in result.stderr
    assert not project.store.exists()
    assert run(cli, project, "good").exit_code == 0  # a retriever timed per question keeps its p95 gate


def test_compare_shows_each_retrievers_corrected_slice_tests_and_ranking_metrics(cli, project):
    result = cli("compare", "cli.small", "good", "half", "--config", str(project.config), env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "half against good by slice (Holm-corrected over 14 tests)" in result.stdout
    assert "No difference survives Holm correction at 0.05 over 14 tests." in result.stdout
    assert "randomization" in result.stdout and "McNemar" in result.stdout
    assert "MRR@3" in result.stdout and "nDCG@3" in result.stdout


def test_history_says_how_each_run_measured_latency(cli, project):
    with_lexical_retriever(project)
    run(cli, project, "bm25")
    [entry] = json.loads(cli("history", "cli.small", "bm25", "--config", str(project.config), "--json").stdout)["runs"]
    assert entry["latency_mode"] == "batch_mean" and entry["latency_p95_ms"] is None
    assert entry["latency_batch_mean_ms"] >= 0


def test_a_drop_explained_by_unjudged_documents_is_inconclusive_with_the_exit_codes_of_any_inconclusive(cli, project):
    configure(project, tolerances={"max_unjudged_share": 0.5})
    run(cli, project, "good")
    project.rankings("good", {"alpha question": ["new-1", "new-2"], "beta question": ["d3"]})  # q1's hit lost to new documents

    warned = run(cli, project, "good", "--json")
    document = json.loads(warned.stdout)
    assert warned.exit_code == 0 and warned.stderr.startswith("warning: Inconclusive: unjudged: top-1 hit rate dropped 50.0 pp")
    assert "1 of the 1 lost hits have unjudged documents in their new top 3: judge them before trusting this." in warned.stderr
    assert document["regression"]["unjudged_lost_hits"] == ["q1"] and document["regression"]["is_inconclusive"] is True
    assert document["questions"][0]["unjudged_document_ids"] == ["new-1", "new-2"]

    project.rankings("good", PERFECT)
    run(cli, project, "good")  # the baseline is the latest run: back to the perfect one
    project.rankings("good", {"alpha question": ["new-1", "new-2"], "beta question": ["d3"]})
    failed = run(cli, project, "good", "--fail-on-inconclusive", "--fail-on-regression")
    assert failed.exit_code == 1 and failed.stderr.startswith("error: Inconclusive: unjudged:")


def test_a_regression_unjudged_documents_cannot_clear_counts_them_in_the_details_not_the_verdict(cli, project):
    baseline = json.loads(run(cli, project, "good", "--json").stdout)["run_id"]
    project.rankings("good", {"alpha question": ["new-1"], "beta question": []})  # q1 lost to a new document, q2 to nothing

    result = run(cli, project, "good", "--show", "none")
    document = json.loads(run(cli, project, "good", "--json", "--baseline", baseline).stdout)

    assert result.stderr.startswith("warning: Regression: top-1 hit rate dropped 100.0 pp") and "unjudged" not in result.stderr
    assert "Flipped hit → miss (2, 1 with unjudged documents in their place): q1, q2" in result.stdout
    assert document["regression"]["unjudged_lost_hits"] == ["q1"]
    assert document["regression"]["unjudged_could_clear"] is False


def test_a_regression_unjudged_documents_could_clear_says_to_judge_them_in_the_verdict(cli, project):
    run(cli, project, "good")
    project.rankings("good", {"alpha question": ["new-1", "d1"], "beta question": ["d3", "d2"]})  # q1's top-1 lost

    document = json.loads(run(cli, project, "good", "--json").stdout)

    assert document["regression"]["verdict"] == "regression" and document["regression"]["unjudged_could_clear"] is True
    assert document["regression"]["summary"].endswith(
        "1 of the 1 lost hits have unjudged documents in their new top 1; counted as relevant they would bring every drop "
        "within its tolerance: judge them before trusting this."
    )
