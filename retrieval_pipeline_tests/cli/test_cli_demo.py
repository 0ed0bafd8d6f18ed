"""The embedded demo through the command line, as a first-time user meets it: no configuration at all.

The store and the index cache live in tmp_path; nothing is written to the home folder.
"""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest
from printed_tables import printed_table

from retrieval_pipeline.core.services.configuration.lookup import demo_config_path

pytestmark = pytest.mark.skipif(not demo_config_path().exists(), reason="the embedded demo is not built yet")


@pytest.fixture
def demo_env(tmp_path, monkeypatch):
    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)
    monkeypatch.setenv("RETRIEVAL_EVAL_CACHE", str(tmp_path / "cache"))
    return tmp_path / "store"


def test_demo_runs_twice_without_configuration_then_reports_no_regression(cli, demo_env):
    first = cli("run", "demo.cranfield", "bm25_stemmed", "--store", str(demo_env), "--json")

    assert first.exit_code == 0, first.stderr
    document = json.loads(first.stdout)
    assert document["regression"]["has_baseline"] is False and document["complete"] is True
    assert set(document["by_form"]) == {"match", "gap"}
    assert 0.5 < document["top3_hit_rate"] <= 1.0  # BM25 on Cranfield: about 0.7 (README of the shared data)

    second = cli("run", "demo.cranfield", "bm25_stemmed", "--store", str(demo_env))

    assert second.exit_code == 0, second.stderr
    assert "No regression: top-1 +0.0 pp, top-3 +0.0 pp." in second.stdout
    assert (
        f"Top-1 hit rate: {document['top1_hit_rate'] * 100:.1f}% ({document['top1_hit_count']}/{document['question_count']})"
        in second.stdout
    )
    assert "top-3 misses and errors (--show all lists every question)" in second.stdout


def test_demo_compare_and_list(cli, demo_env):
    compared = cli("compare", "demo.cranfield", "bm25_stemmed", "bm25_plain", "--limit", "5")

    assert compared.exit_code == 0, compared.stderr
    assert "McNemar" in compared.stdout and "Disagreements" in compared.stdout
    assert not demo_env.exists()

    listed = cli("list")
    assert listed.exit_code == 0 and "demo.cranfield" in listed.stdout and "bm25_stemmed" in listed.stdout


def test_demo_unknown_retriever_lists_the_demo_ones(cli, demo_env):
    result = cli("run", "demo.cranfield", "bm25", "--store", str(demo_env))

    assert result.exit_code == 1
    assert "unknown retriever 'bm25'; available:" in result.stderr and "bm25_stemmed" in result.stderr
    assert not demo_env.exists()


def test_the_documented_session_is_reproducible_with_the_shipped_retuned_configuration(cli, demo_env, tmp_path):
    """docs/verdicts.md, "A session on the demo": the demo, then `--config $DEMO/retuned.yaml`, gives the
    verdict and flips shown there, and the summary table shown under "In CI"."""
    readme = (Path(__file__).resolve().parents[2] / "docs" / "verdicts.md").read_text(encoding="utf-8")
    retuned = demo_config_path().with_name("retuned.yaml")
    assert cli("run", "demo.cranfield", "bm25_stemmed", "--store", str(demo_env), "--show", "none").exit_code == 0
    summary = tmp_path / "summary.md"

    second = cli(
        "run",
        "demo.cranfield",
        "bm25_stemmed",
        "--store",
        str(demo_env),
        "--config",
        str(retuned),
        "--show",
        "none",
        "--max-top3-drop",
        "0.05",
        "--fail-on-regression",
        "--markdown",
        str(summary),
    )

    assert second.exit_code == 1
    verdict = next(line for line in second.stdout.splitlines() if line.startswith("Verdict: "))
    flips = [line.split(":")[0] for line in second.stdout.splitlines() if line.startswith("Flipped")]
    assert verdict in readme and all(flip in readme for flip in flips)
    table = [line for line in summary.read_text(encoding="utf-8").splitlines() if line.startswith(("| top-", "| MRR", "| nDCG"))]
    assert table and all(row in readme for row in table)


def exact_mcnemar(lost: int, won: int) -> float:
    """Two-sided exact McNemar from first principles: under no difference each of the n discordant
    questions goes either way with probability 1/2; p doubles the smaller tail, capped at 1."""
    discordant = lost + won
    tail = sum(comb(discordant, i) for i in range(min(lost, won) + 1))
    return min(1.0, float(Fraction(2 * tail, 2**discordant)))


def test_compare_shows_under_top1_and_top3_their_own_mcnemar_tests(cli, demo_env):
    """Recall@1 and Recall@3 share top-1's and top-3's cut-offs; their randomization tests once stood
    under top-1 and top-3, as scores (-0.026, p 0.072) where the rate rose 1.2 pp with p 0.810."""
    compared = ("compare", "demo.cranfield", "bm25_stemmed", "bm25_titles")
    document = json.loads(cli(*compared, "--json").stdout)
    table = printed_table(cli(*compared).stdout, "Overall")

    titles = next(row for row in table.rows() if row["retriever"] == "bm25_titles")
    outcomes = [d["results"] for d in document["disagreements"]]  # --json lists every disagreeing question
    for k in (1, 3):
        lost = sum(o["bm25_stemmed"][f"top{k}_hit"] and not o["bm25_titles"][f"top{k}_hit"] for o in outcomes)
        won = sum(o["bm25_titles"][f"top{k}_hit"] and not o["bm25_stemmed"][f"top{k}_hit"] for o in outcomes)
        [test] = [t for t in document["paired_tests"] if t["measure"] == f"top{k}"]
        assert (test["reference_only_hits"], test["retriever_only_hits"]) == (lost, won)
        assert test["delta"] == pytest.approx((won - lost) / document["question_count"])
        assert test["p_value"] == pytest.approx(exact_mcnemar(lost, won))
        p = test["p_value"]
        assert titles[f"Δ top-{k}"] == f"{test['delta'] * 100:+.1f} pp"
        assert titles[f"p top-{k}"] == ("<0.001" if p < 0.001 else f"{p:.3f}")
