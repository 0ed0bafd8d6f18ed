"""The team's loop on a public collection, chained: import graded qrels, run two retrievers, pool, judge,
apply, run again. The verdict after a judging round compares every question of the set, and says exactly
what a fresh scoring of both rankings under today's labels says."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml

ANSWERS = ("yes", "no", "no", "")
"""A person's answers, row after row of the pool: mostly no, some yes, some left for later."""
BM25_A = {"k1": 1.5, "b": 0.75}
BM25_B = {"k1": 0.9, "b": 0.3, "method": "robertson", "stemmer": None}


def configure(root: Path, corpus: Path, a_params: dict) -> Path:
    retrievers = {
        name: {"kind": "lexical", "corpus": str(corpus), **params} for name, params in (("bm25_a", a_params), ("bm25_b", BM25_B))
    }
    config = {
        "store": str(root / "results"),
        "cache_dir": str(root / "cache"),
        "question_sets": [{"file": "cranfield.jsonl"}],
        "retrievers": retrievers,
    }
    path = root / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def evaluate(cli, config: Path, retriever: str) -> dict:
    result = cli("run", "cranfield.graded", retriever, "--config", str(config), "--json")
    assert result.exit_code in (0, 1), result.stderr  # 1: a regression, which this test does not gate on
    return json.loads(result.stdout)


def labels(set_file: Path) -> dict[str, set[str]]:
    """Each question's expected ids as the set file says today, read as plain JSON lines."""
    lines = set_file.read_text(encoding="utf-8").splitlines()[1:]
    return {q["id"]: set(q["expected_document_ids"]) for q in map(json.loads, lines)}


def first_hit(ranking: list[str], expected: set[str]) -> int | None:
    return next((rank for rank, document in enumerate(ranking, start=1) if document in expected), None)


def hits(run: dict, expected: dict[str, set[str]], k: int) -> dict[str, bool]:
    ranks = {q["id"]: first_hit(q["retrieved_document_ids"], expected[q["id"]]) for q in run["questions"]}
    return {question_id: rank is not None and rank <= k for question_id, rank in ranks.items()}


@pytest.mark.slow
def test_after_a_judging_round_every_question_stays_compared_and_the_verdict_is_a_fresh_scoring(cli, shared_data, tmp_path):
    collection = shared_data / "cranfield"
    set_file = tmp_path / "cranfield.jsonl"
    imported = cli(
        "import", "beir", str(collection), "--identifier", "cranfield.graded", "--out", str(set_file), "--min-relevance", "2"
    )
    assert imported.exit_code == 0, imported.stderr
    assert "left out 3 queries judged only not relevant" in imported.stderr  # their only judgements are grade 1
    config = configure(tmp_path, collection / "corpus.jsonl", BM25_A)
    baseline = evaluate(cli, config, "bm25_a")
    evaluate(cli, config, "bm25_b")
    pool = tmp_path / "pool.csv"
    pooled = cli("pool", "cranfield.graded", "--depth", "3", "--out", str(pool), "--config", str(config))
    assert pooled.exit_code == 0, pooled.stderr
    with pool.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for number, row in enumerate(rows):
        row["judgement"] = ANSWERS[number % len(ANSWERS)]
    with pool.open("w", encoding="utf-8", newline="") as handle:  # as a person saves the judging file
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    answered = {}
    for row in rows:
        answered.setdefault(row["question_id"], set()).add(row["judgement"])
    only_no = {question_id for question_id, answers in answered.items() if answers - {""} == {"no"}}
    assert only_no and any("yes" in answers for answers in answered.values())  # both kinds of relabelling happen

    applied = cli("judge", "apply", str(pool), str(set_file))
    assert applied.exit_code == 0, applied.stderr
    configure(tmp_path, collection / "corpus.jsonl", BM25_B)  # bm25_a changes: its new rankings differ
    after = evaluate(cli, config, "bm25_a")

    changes = after["set_changes"]
    relabelled = {question_id for question_id, answers in answered.items() if answers != {""}}
    assert (changes["added"], changes["removed"], changes["not_rescored_questions"]) == ([], [], [])
    assert set(changes["relabelled"]) == set(changes["rescored"]) == relabelled
    assert changes["compared"] == len(after["questions"]) == 222
    regression = after["regression"]
    assert regression["baseline_run_id"] == baseline["run_id"]
    today = labels(set_file)
    was = {k: hits(baseline, today, k) for k in (1, 3)}
    now = {k: hits(after, today, k) for k in (1, 3)}
    for k in (1, 3):
        assert regression[f"top{k}_delta"] == pytest.approx((sum(now[k].values()) - sum(was[k].values())) / 222)
    lost = [q for q in today if any(was[k][q] and not now[k][q] for k in (1, 3))]
    gained = [q for q in today if q not in lost and any(now[k][q] and not was[k][q] for k in (1, 3))]
    assert (regression["flipped_to_miss"], regression["flipped_to_hit"]) == (lost, gained)
    assert lost and gained  # a real change to score, not two identical rankings
