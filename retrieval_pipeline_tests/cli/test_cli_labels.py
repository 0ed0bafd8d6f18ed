"""Growing the labels: pool the unjudged documents of the latest runs, judge them, merge them into the set."""

from __future__ import annotations

import csv
import json

import pytest
import yaml
from desk_project import SET_FILE, answer, apply, evaluate, pool, read_csv


def test_pool_lists_each_unjudged_document_once_with_who_ranked_it_and_its_text(cli, desk):
    evaluate(cli, desk, "old")
    evaluate(cli, desk, "new")

    result = pool(cli, desk, "pool.csv")

    assert result.exit_code == 0, result.stderr
    assert "Pooled 4 unjudged document(s) for 3 question(s) from the top 3 of the latest runs of new, old" in result.stdout
    rows = read_csv(desk / "pool.csv")
    assert [(r["question_id"], r["document_id"], r["ranked_by"], r["judgement"]) for r in rows] == [
        ("q1", "n1", "new@1", ""),
        ("q2", "n2", "new@1", ""),
        ("q2", "d1", "new@2", ""),
        ("q3", "n3", "new@1", ""),
    ]
    first = rows[0]
    assert (first["question"], first["expected_document_ids"], first["expected_title"], first["title"]) == (
        "how do I reset my password",
        "d1",
        "Password reset",
        "Account recovery",
    )
    assert len(first["text"]) == 500 and first["text"].startswith("Recover your account")
    as_jsonl = pool(cli, desk, "pool.jsonl", "new")
    assert as_jsonl.exit_code == 0, as_jsonl.stderr
    lines = [json.loads(line) for line in (desk / "pool.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(line["question_id"], line["document_id"], line["judgement"]) for line in lines] == [
        (r["question_id"], r["document_id"], "") for r in rows
    ]
    assert lines[0]["expected_document_ids"] == ["d1"] and lines[0]["ranked_by"] == ["new@1"]


def test_a_pool_of_a_retriever_without_runs_is_refused_listing_those_with_runs(cli, desk):
    evaluate(cli, desk, "old")
    result = pool(cli, desk, "pool.csv", "new")
    assert result.exit_code == 2 and not (desk / "pool.csv").exists()  # invalid input
    assert "no stored run of retriever 'new' on set 'desk.small'; retrievers with a run: old" in result.stderr


def test_pool_judge_apply_lifts_the_new_retriever_by_exactly_the_documents_judged_yes(cli, desk):
    evaluate(cli, desk, "old")
    before = evaluate(cli, desk, "new")
    assert (before["top1_hit_count"], before["top3_hit_count"]) == (0, 1)  # only d1, at rank 2 of q1
    assert pool(cli, desk, "pool.csv", "new").exit_code == 0
    answer(desk / "pool.csv", {("q1", "n1"): "yes", ("q2", "n2"): "no", ("q2", "d1"): "", ("q3", "n3"): "yes"})

    applied = apply(cli, desk, "pool.csv")

    assert applied.exit_code == 0, applied.stderr
    assert applied.stdout.splitlines() == [
        f"Merged into {desk / 'desk.yaml'}, 3 question(s) changed:",
        "  q1: +1 expected (n1)",
        "  q2: +1 rejected (n2)",
        "  q3: +1 expected (n3); was an empty-label question, now a normal one",
    ]
    text = (desk / "desk.yaml").read_text(encoding="utf-8")
    assert "# The support-desk set: labelled by the docs team." in text and "# the reset page" in text
    labels = {q["id"]: q for q in yaml.safe_load(text)["questions"]}
    assert labels["q1"]["expected_document_ids"] == ["d1", "n1"] and "rejected_document_ids" not in labels["q1"]
    assert labels["q2"]["rejected_document_ids"] == ["n2"] and labels["q3"]["expected_document_ids"] == ["n3"]

    after = evaluate(cli, desk, "new")
    # exactly the two yeses: n1 makes q1 a top-1 hit (it was a top-3 hit by d1), n3 makes q3 a hit; q2 stays a miss
    assert (after["top1_hit_count"], after["top3_hit_count"]) == (2, 2)
    assert [q["unjudged_document_ids"] for q in after["questions"]] == [[], ["d1"], []]
    assert pool(cli, desk, "again.csv", "new").exit_code == 0  # today's labels: only the unanswered one is left
    assert [(r["question_id"], r["document_id"]) for r in read_csv(desk / "again.csv")] == [("q2", "d1")]
    assert after["metrics"]["judged@3"] > before["metrics"]["judged@3"]


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        ([("q9", "n1", "yes")], "pool.csv:2: field 'question_id': question 'q9' is not in set 'desk.small'"),
        (
            [("q1", "n1", "yes"), ("q1", "n1", "no")],
            "pool.csv:3: field 'judgement': conflicting answers for question 'q1', document 'n1': also judged at",
        ),
        (
            [("q1", "d1", "no")],
            "pool.csv:2: field 'judgement': conflicting answers for question 'q1', document 'd1': the set lists it as expected",
        ),
        ([("q1", "n1", "maybe")], "pool.csv:2: field 'judgement': 'maybe' is not an answer; use yes, no or leave it empty"),
    ],
    ids=["unknown-question", "conflicting-answers", "contradicts-the-set", "not-an-answer"],
)
def test_apply_refuses_bad_judgements_in_one_line_and_leaves_the_set_file_untouched(cli, desk, rows, problem):
    with (desk / "pool.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question_id", "document_id", "judgement"])
        writer.writerows(rows)

    result = apply(cli, desk, "pool.csv")

    assert result.exit_code == 2  # invalid input
    assert len(result.stderr.strip().splitlines()) == 1 and problem in result.stderr
    assert (desk / "desk.yaml").read_text(encoding="utf-8") == SET_FILE


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_apply_keeps_a_json_or_jsonl_set_file_in_its_format(cli, desk, suffix):
    from retrieval_pipeline.core.golden.question_file_writer import write_question_set_file
    from retrieval_pipeline.core.golden.question_files import load_question_set_file

    golden = load_question_set_file(desk / "desk.yaml")
    path = write_question_set_file(golden, desk / f"desk{suffix}")
    untouched = path.read_text(encoding="utf-8").splitlines()
    (desk / "pool.csv").write_text("question_id,document_id,judgement\nq2,n2,no\n", encoding="utf-8")

    assert apply(cli, desk, "pool.csv", path.name).exit_code == 0

    assert load_question_set_file(path).question("q2").rejected_document_ids == ("n2",)
    if suffix == ".jsonl":  # only the changed question's line is rewritten
        changed = [i for i, (a, b) in enumerate(zip(untouched, path.read_text(encoding="utf-8").splitlines())) if a != b]
        assert changed == [2]
