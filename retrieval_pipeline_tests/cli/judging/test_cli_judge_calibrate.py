"""`judge calibrate FILE`: the machine judge against the person, figures checked against scikit-learn, scipy
and the hit rates computed here from the run files; the rows to answer next drawn at random, blind."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from calibration_project import RETRIEVERS, answer_rows, judged_project, make_project, run_and_pool
from desk_project import read_csv
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from retrieval_pipeline.core.scoring.stats.intervals import Z_95


@pytest.fixture
def answered(cli, tmp_path) -> tuple[Path, Path, list[dict]]:
    return judged_project(cli, tmp_path / "project", flip=0.2)


def calibrate(cli, root: Path, pool: Path, *options: str):
    return cli("judge", "calibrate", str(pool), "--config", str(root / "config.yaml"), *options)


def top3_rates(root: Path, labels: dict[str, set[str]]) -> dict[str, float]:
    rates = {}
    for name in RETRIEVERS:
        runs = [json.loads(line) for line in (root / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
        rates[name] = sum(bool(set(run["document_ids"][:3]) & labels[run["query_id"]]) for run in runs) / len(runs)
    return rates


def test_calibration_gives_kappa_confusion_and_the_ranking_tau_as_computed_independently(cli, answered):
    root, pool, rows = answered
    result = calibrate(cli, root, pool, "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)

    both = [row for row in rows if row["judgement"]]
    humans = [row["judgement"] == "yes" for row in both]
    machines = [row["machine_judgement"] == "yes" for row in both]
    assert document["n"] == len(both) and document["rows"] == len(rows)
    assert document["kappa"] == pytest.approx(cohen_kappa_score(humans, machines))
    assert document["kappa_interval"][0] < document["kappa"] < document["kappa_interval"][1]
    pairs = list(zip(humans, machines))
    assert document["confusion"] == {
        "human_yes_machine_yes": pairs.count((True, True)),
        "human_yes_machine_no": pairs.count((True, False)),
        "human_no_machine_yes": pairs.count((False, True)),
        "human_no_machine_no": pairs.count((False, False)),
    }
    assert document["precision"] == pytest.approx(pairs.count((True, True)) / sum(machines))
    assert document["judged_by"] == ["umbrela@abc123"]

    human = {f"q{i}": {f"q{i}-r0"} for i in range(40)}
    for row in both:
        if row["judgement"] == "yes":
            human[row["question_id"]].add(row["document_id"])
    combined = {question: set(ids) for question, ids in human.items()}
    for row in rows:
        if not row["judgement"] and row["machine_judgement"] == "yes":
            combined[row["question_id"]].add(row["document_id"])
    expected_human, expected_combined = top3_rates(root, human), top3_rates(root, combined)
    ranking = document["ranking"]
    assert ranking["figure"] == "top3"
    assert ranking["scores"] == {"human": pytest.approx(expected_human), "human+machine": pytest.approx(expected_combined)}
    tau = kendalltau([expected_human[n] for n in RETRIEVERS], [expected_combined[n] for n in RETRIEVERS]).statistic
    assert ranking["kendall_tau"] == pytest.approx(tau)


def test_the_terminal_says_how_many_more_answers_narrow_the_interval(cli, answered):
    root, pool, _ = answered
    result = calibrate(cli, root, pool, "--width", "0.3")
    assert result.exit_code == 0, result.stderr
    document = json.loads(calibrate(cli, root, pool, "--width", "0.3", "--json").stdout)
    assert f"about {document['more_rows_for_width']} more human answers bring the interval under 0.3 wide" in result.stdout
    assert f"kappa {document['kappa']:.3f} (95% interval" in result.stdout
    assert "Kendall's tau" in result.stdout


def test_rows_to_answer_next_are_a_seeded_stratified_sample_of_unanswered_rows_with_the_machine_hidden(cli, answered):
    root, pool, rows = answered
    out = root / "next.csv"
    assert calibrate(cli, root, pool, "--next", "20", "--out", str(out)).exit_code == 0
    chosen = read_csv(out)
    first = out.read_bytes()
    assert calibrate(cli, root, pool, "--next", "20", "--out", str(out)).exit_code == 0
    assert out.read_bytes() == first  # the seed makes the sample
    assert calibrate(cli, root, pool, "--next", "20", "--out", str(out), "--seed", "5").exit_code == 0
    assert out.read_bytes() != first

    assert len(chosen) == 20
    assert not {"machine_judgement", "machine_grade", "judged_by"} & set(chosen[0])
    by_pair = {(row["question_id"], row["document_id"]): row for row in rows}
    picked = [by_pair[(row["question_id"], row["document_id"])] for row in chosen]
    assert all(not row["judgement"] for row in picked)
    waiting = [row for row in rows if not row["judgement"]]
    share = sum(row["machine_judgement"] == "yes" for row in waiting) / len(waiting)
    assert abs(sum(row["machine_judgement"] == "yes" for row in picked) - 20 * share) < 1


def test_a_machine_answer_that_is_not_yes_or_no_is_refused_naming_the_line(cli, answered):
    root, pool, _ = answered
    pool.write_text(pool.read_text(encoding="utf-8").replace(",yes,3,", ",maybe,3,", 1), encoding="utf-8")
    result = calibrate(cli, root, pool)
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "pool.csv:" in result.stderr and "field 'machine_judgement'" in result.stderr and "'maybe'" in result.stderr


def test_without_rows_answered_by_both_it_says_what_to_do(cli, tmp_path):
    root = make_project(tmp_path / "project")
    pool = run_and_pool(cli, root)
    answer_rows(pool, human_share=0.0, flip=0.2)
    result = calibrate(cli, root, pool)
    assert result.exit_code == 0, result.stderr
    assert "No row carries both answers" in result.stdout


def test_next_without_out_is_refused(cli, answered):
    root, pool, _ = answered
    result = calibrate(cli, root, pool, "--next", "5")
    assert result.exit_code == 2 and "--next N and --out FILE go together" in result.stderr


@pytest.mark.parametrize("spelling", ["as given", "by another path", "by a hard link"])
def test_rows_to_answer_next_are_never_written_over_the_judging_file_itself(cli, answered, spelling):
    root, pool, _ = answered
    out = {
        "as given": pool,
        "by another path": pool.parent / ".." / pool.parent.name / pool.name,
        "by a hard link": root / "linked.csv",
    }[spelling]
    if spelling == "by a hard link":
        os.link(pool, out)
    before = pool.read_bytes()

    result = calibrate(cli, root, pool, "--next", "10", "--out", str(out))

    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: --out {out} is the judging file this command reads ({pool}): write to another file"
    ]
    assert pool.read_bytes() == before


def test_estimates_are_the_prediction_powered_formula_over_the_figures_computed_here(cli, tmp_path):
    root = make_project(tmp_path / "project")
    pool = run_and_pool(cli, root)
    rows = answer_rows(pool, human_share=0.4, flip=0.15, whole_questions=True)
    result = calibrate(cli, root, pool, "--estimate", "--json")
    assert result.exit_code == 0, result.stderr
    estimates = json.loads(result.stdout)["estimates"]

    pooled = {row["question_id"] for row in rows}
    labelled = sorted({r["question_id"] for r in rows if r["judgement"]}, key=lambda q: int(q[1:]))
    assert estimates["labelled_questions"] == labelled and estimates["pooled_questions"] == len(pooled)
    human = {f"q{i}": {f"q{i}-r0"} for i in range(40)}
    machine = {question: set(ids) for question, ids in human.items()}
    for row in rows:
        if row["judgement"] == "yes":
            human[row["question_id"]].add(row["document_id"])
        if row["machine_judgement"] == "yes":
            machine[row["question_id"]].add(row["document_id"])
    for name in RETRIEVERS:
        runs = {
            run["query_id"]: run["document_ids"][:3]
            for run in map(json.loads, (root / f"{name}.jsonl").read_text(encoding="utf-8").splitlines())
        }
        y = {q: float(bool(set(ranking) & human[q])) for q, ranking in runs.items()}
        f = {q: float(bool(set(ranking) & machine[q])) for q, ranking in runs.items()}
        exact = [f[q] for q in f if q not in pooled]
        predicted = np.array([f[q] for q in f if q in pooled])
        errors = np.array([y[q] - f[q] for q in labelled])
        share = len(predicted) / 40
        value = share * (predicted.mean() + errors.mean()) + sum(exact) / 40
        half = Z_95 * share * math.sqrt(predicted.var(ddof=1) / len(predicted) + errors.var(ddof=1) / len(errors))
        top3 = estimates["retrievers"][name]["top3"]
        assert top3["machine_filled"] == pytest.approx(sum(f.values()) / 40)
        assert top3["prediction_powered"]["value"] == pytest.approx(value)
        assert top3["prediction_powered"]["interval"] == pytest.approx([max(0.0, value - half), min(1.0, value + half)])
        human_only = share * np.mean([y[q] for q in labelled]) + sum(exact) / 40
        assert top3["human_only"]["value"] == pytest.approx(human_only)
        assert set(estimates["retrievers"][name]) == {"top1", "top3", "ndcg@3"}


def test_estimates_need_whole_questions_answered(cli, answered):
    root, pool, _ = answered  # answers scattered over rows: no question has all of its rows answered
    result = calibrate(cli, root, pool, "--estimate")
    assert result.exit_code == 2 and "answer whole questions, drawn at random" in result.stderr
