"""Traffic-weighted rates on the command line: a real query log (paraphrased demo questions and off-topic
SciFact claims, traffic known in advance) read by the query-log code, assigned by the coverage service,
and real BM25 over the demo's Cranfield corpus."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from printed_tables import percent, printed_table
from traffic_project import Traffic, logged_project

from retrieval_pipeline.core.storage.run_summary import RunSummary
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.core.storage.stored_runs import recorded_traffic

SET = "demo.cranfield"


@pytest.fixture
def logged(tmp_path: Path, shared_data: Path) -> tuple[Path, Traffic]:
    """The demo set, BM25 as `bm25` and, without stemming, as `unstemmed`, and a JSONL log named `traffic`."""
    path, traffic = logged_project(tmp_path, shared_data)
    config = yaml.safe_load(path.read_text())
    config["retrievers"]["unstemmed"] = {**config["retrievers"]["bm25"], "stemmer": None}
    path.write_text(yaml.safe_dump(config))
    return path, traffic


def configured(path: Path, **changes) -> Path:
    config = yaml.safe_load(path.read_text())
    for key, value in changes.items():
        config[key] = value
    path.write_text(yaml.safe_dump(config))
    return path


def run_json(cli, config: Path, *args: str) -> dict:
    result = cli("run", SET, *args, "--config", str(config), "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def weights_of(document: dict, traffic: Traffic) -> np.ndarray:
    return np.array([traffic.by_question[row["id"]] for row in document["questions"]], float)


def test_run_with_traffic_gives_numpy_weighted_means_of_the_per_question_hits_and_scores(cli, logged):
    config, traffic = logged
    document = run_json(cli, config, "bm25", "--traffic", "traffic")
    weights, weighted = weights_of(document, traffic), document["traffic"]
    for figure in ("top1", "top3"):
        hits = np.array([row[f"{figure}_hit"] for row in document["questions"]], float)
        assert weighted["figures"][figure] == pytest.approx(np.average(hits, weights=weights), abs=1e-12)
    for key in document["metrics"]:
        scores = np.array([row["metrics"][key] for row in document["questions"]])
        assert weighted["figures"][key] == pytest.approx(np.average(scores, weights=weights), abs=1e-12)
    assert weighted["traffic"] == sum(traffic.by_question.values()) == traffic.total - traffic.off_topic
    assert weighted["effective_questions"] == pytest.approx(weights.sum() ** 2 / (weights**2).sum())
    assert weighted["log"] == "traffic" and weighted["fingerprint"].startswith("sha256:")


def test_questions_without_traffic_are_counted_in_tables_and_named_in_json(cli, logged):
    config, traffic = logged
    silent = [question_id for question_id, count in traffic.by_question.items() if count == 0]
    document = run_json(cli, config, "bm25", "--traffic", "traffic")
    assert document["traffic"]["zero_traffic_question_ids"] == silent
    assert document["traffic"]["zero_traffic_count"] == len(silent) > 0
    printed = cli("run", SET, "bm25", "--config", str(config), "--traffic", "traffic", "--show", "none").stdout
    assert f"{len(silent)} question(s) without traffic weigh 0." in printed
    assert "Weighted top-1 hit rate: " in printed and "Weighted top-3 hit rate: " in printed


def test_a_set_naming_its_log_is_weighted_and_the_stored_run_keeps_the_weights(cli, logged, tmp_path):
    config, traffic = logged
    configured(config, question_sets=[{**yaml.safe_load(config.read_text())["question_sets"][0], "traffic": "traffic"}])
    first = run_json(cli, config, "bm25")
    assert (
        first["traffic"]["figures"]["top1"] == run_json(cli, config, "bm25", "--traffic", "traffic")["traffic"]["figures"]["top1"]
    )
    store = ResultStore(str(tmp_path / "results"))
    key = HistoryKey(SET, "bm25")
    oldest = store.history(key)[-1]
    row = store.read_summary(oldest)
    stored = recorded_traffic(row)
    assert stored is not None and stored.log == "traffic" and stored.fingerprint == first["traffic"]["fingerprint"]
    assert dict(stored.counts) == traffic.by_question
    summary = RunSummary.of(key, row)
    assert summary.traffic_log == "traffic"
    assert summary.weighted == pytest.approx(first["traffic"]["figures"])
    assert summary.weighted_intervals["top1"] == pytest.approx(tuple(first["traffic"]["intervals"]["top1"]))
    report = cli("report", SET, "bm25", "--config", str(config))
    assert report.exit_code == 0 and "| traffic-weighted | this run | baseline | change |" in report.stdout
    history = json.loads(cli("history", SET, "bm25", "--config", str(config), "--json").stdout)
    assert [run["traffic"]["figures"]["top3"] for run in history["runs"]] == [first["traffic"]["figures"]["top3"]] * 2


def test_weighted_tolerances_gate_the_weighted_rates_and_the_verdict_says_so(cli, logged):
    config, _ = logged
    configured(config, tolerances={"weighted": True, "max_top1_drop": 0.05})
    run_json(cli, config, "bm25", "--traffic", "traffic")
    again = run_json(cli, config, "bm25", "--traffic", "traffic")
    assert again["regression"]["summary"] == "No regression, traffic-weighted by log 'traffic': top-1 +0.0 pp, top-3 +0.0 pp."
    assert again["regression"]["tolerances"]["weighted"] is True and again["traffic"]["gated"] is True
    assert again["traffic"]["deltas"]["top1"] == 0.0
    plain = run_json(cli, config, "bm25")  # no log: the plain rates are gated, as the sentence says
    assert plain["regression"]["summary"] == "No regression: top-1 +0.0 pp, top-3 +0.0 pp." and "traffic" not in plain


def test_without_traffic_the_documents_are_as_before(cli, logged):
    config, _ = logged
    document = run_json(cli, config, "bm25")
    assert "traffic" not in document and "weighted" not in document["regression"]["tolerances"]
    compared = cli("compare", SET, "bm25", "unstemmed", "--config", str(config), "--json")
    assert all("traffic" not in run for run in json.loads(compared.stdout)["runs"])


def test_compare_with_traffic_shows_each_retrievers_weighted_change_against_the_reference(cli, logged):
    config, traffic = logged
    result = cli("compare", SET, "bm25", "unstemmed", "--config", str(config), "--traffic", "traffic", "--json")
    assert result.exit_code == 0, result.stderr
    reference, other = (run["traffic"] for run in json.loads(result.stdout)["runs"])
    assert reference["deltas"] == {}
    for key, value in other["figures"].items():
        assert other["deltas"][key] == pytest.approx(value - reference["figures"][key])
    alone = run_json(cli, config, "unstemmed", "--traffic", "traffic")["traffic"]["figures"]
    assert other["figures"] == pytest.approx(alone)
    printed = cli("compare", SET, "bm25", "unstemmed", "--config", str(config), "--traffic", "traffic").stdout
    assert "Traffic-weighted by log 'traffic'" in printed and "Δ top-1" in printed


def test_an_unknown_log_is_refused_with_the_known_ones(cli, logged):
    config, _ = logged
    result = cli("run", SET, "bm25", "--config", str(config), "--traffic", "nolog")
    assert result.exit_code == 1  # an unknown name, like an unknown set or retriever
    assert result.stderr.strip() == "error: unknown query log 'nolog'; available: traffic (nor the path of an existing log file)"


def test_a_log_path_that_does_not_exist_is_named_as_neither_a_log_nor_a_file(cli, logged, tmp_path):
    config, _ = logged
    missing = str(tmp_path / "logs" / "today.jsonl")
    result = cli("run", SET, "bm25", "--config", str(config), "--traffic", missing)
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"error: unknown query log '{missing}'; available: traffic (nor the path of an existing log file)"
    )


def test_a_set_entry_naming_an_unknown_log_is_bad_input_of_the_configuration(cli, logged):
    config, _ = logged
    configured(config, question_sets=[{**yaml.safe_load(config.read_text())["question_sets"][0], "traffic": "nolog"}])
    result = cli("run", SET, "bm25", "--config", str(config))
    assert result.exit_code == 2
    assert str(config) in result.stderr and "question_sets.0" in result.stderr and "traffic" in result.stderr
    assert "unknown query log 'nolog'" in result.stderr
    assert not (config.parent / "results").exists()  # refused before anything was stored


def test_history_marks_weighted_runs_and_shows_their_weighted_rates_beside_the_plain_ones(cli, logged):
    config, _ = logged
    plain = run_json(cli, config, "bm25")
    weighted = run_json(cli, config, "bm25", "--traffic", "traffic")

    printed = cli("history", SET, "bm25", "--config", str(config))

    assert printed.exit_code == 0, printed.stderr
    table = printed_table(printed.stdout, printed.stdout.splitlines()[0])
    assert table.headers[2:8] == ("top-1", "Δ top-1", "weighted top-1", "top-3", "Δ top-3", "weighted top-3")
    rows = {row["run id"]: row for row in table.rows()}
    for figure in ("top1", "top3"):
        assert rows[weighted["run_id"]][f"weighted top-{figure[-1]}"] == percent(weighted["traffic"]["figures"][figure])
        assert rows[plain["run_id"]][f"weighted top-{figure[-1]}"] == "—"
    assert rows[weighted["run_id"]]["status"].endswith("traffic-weighted by log 'traffic'")
    assert "traffic-weighted" not in rows[plain["run_id"]]["status"]
