"""Issue 31 checked as the issue says it will be: our own pool over Cranfield, judged through a real local
chat-completions endpoint whose grade is the human qrel flipped on a seeded, known share of the pairs; the
kappa, the provenance of the applied labels and every figure under each label choice against a
computation written here (plain Python, scikit-learn for kappa).

The set holds one qrel per question; the rest of Cranfield's qrels are what the person knows when answering
the pool, so the pool holds relevant documents as well as non-relevant ones."""

from __future__ import annotations

import json
import random
import statistics
from pathlib import Path

import pytest
from cranfield_judging import (
    JUDGE,
    RETRIEVERS,
    configure,
    edit_config,
    hit_rate,
    judged_share,
    keep_one_qrel,
    own_kappa,
    ppi,
    prompt_document,
    qrels,
    read_csv,
    read_jsonl,
    write_csv,
)
from flipping_service import FlippingJudge
from local_servers import running
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from retrieval_pipeline.core.golden.question_files import load_question_set_file

pytestmark = pytest.mark.slow

FLIP = 0.15
"""The share of the pool's (question, document) pairs on which the endpoint contradicts the qrels."""
HUMAN_SHARE = 0.6
"""The share of the pooled questions a person answers wholly, drawn at random."""
DEPTH = 3
SET_ID = "cranfield.e2e"


@pytest.fixture
def cranfield(shared_data: Path) -> Path:
    collection = shared_data / "cranfield"
    if not (collection / "qrels" / "test.tsv").is_file():
        pytest.skip(f"Cranfield's qrels not found in {collection}")
    return collection


def test_issue_31_machine_labels_calibrated_kept_apart_and_scored_as_computed_here(cli, cranfield, tmp_path):
    root = tmp_path
    set_file = root / "cranfield.jsonl"
    imported = cli("import", "beir", str(cranfield), "--identifier", SET_ID, "--out", str(set_file), "--min-relevance", "2")
    assert imported.exit_code == 0, imported.stderr
    keep_one_qrel(set_file)
    relevant = qrels(cranfield)
    corpus = {d["_id"]: d for d in read_jsonl(cranfield / "corpus.jsonl")}

    # two BM25 variants, then the pool of what they ranked and the set does not label
    config = configure(root, cranfield / "corpus.jsonl", "http://127.0.0.1:9/unused")
    rankings = {name: run_rankings(cli, config, name) for name in RETRIEVERS}
    pool = root / "pool.csv"
    pooled = cli("pool", SET_ID, "--depth", str(DEPTH), "--out", str(pool), "--config", str(config))
    assert pooled.exit_code == 0, pooled.stderr
    rows = read_csv(pool)
    pairs = [(row["question_id"], row["document_id"]) for row in rows]
    truth = {pair: pair in relevant for pair in pairs}
    assert 20 < sum(truth.values()) < len(rows) - 20  # the pool holds relevant documents and non-relevant ones

    # the endpoint contradicts the qrels on exactly round(FLIP * rows) pairs drawn with a seed
    generator = random.Random(31)
    flips = set(generator.sample(pairs, round(FLIP * len(pairs))))
    question_ids = {row["question"]: row["question_id"] for row in rows}
    texts = {prompt_document(corpus[d]): d for _, d in pairs}
    assert len(texts) == len({d for _, d in pairs})  # every pooled document is told apart by its text
    machine = {pair: truth[pair] != (pair in flips) for pair in pairs}

    # a person answers every row of a random share of the pooled questions, from the qrels
    pooled_questions = sorted({q for q, _ in pairs}, key=int)
    labelled = sorted(generator.sample(pooled_questions, round(HUMAN_SHARE * len(pooled_questions))), key=int)
    for row in rows:
        pair = (row["question_id"], row["document_id"])
        row["judgement"] = ("yes" if truth[pair] else "no") if pair[0] in labelled else ""
    write_csv(pool, rows)

    with running(FlippingJudge(question_ids, texts, relevant, flips)) as server:
        config = configure(root, cranfield / "corpus.jsonl", server.url())
        judged = cli("judge", "machine", str(pool), "--judge", JUDGE, "--config", str(config), "--json")
    assert judged.exit_code == 0, judged.stderr
    summary = json.loads(judged.stdout)
    assert (summary["rows"], summary["judged"], summary["errors"]) == (len(rows), len(rows), 0)
    assert summary["yes"] == sum(machine.values())
    rows = read_csv(pool)
    judged_by = rows[0]["judged_by"]
    assert judged_by.startswith(f"{JUDGE}@")
    for row in rows:
        pair = (row["question_id"], row["document_id"])
        assert row["machine_judgement"] == ("yes" if machine[pair] else "no"), pair
        assert row["judgement"] == (("yes" if truth[pair] else "no") if pair[0] in labelled else "")
        assert row["judged_by"] == judged_by

    check_calibration(cli, config, pool, pairs, truth, machine, labelled, judged_by)
    check_ranking(cli, config, pool, set_file, rankings, pairs, truth, machine, labelled)
    check_estimates(cli, config, pool, set_file, rankings, pairs, truth, machine, labelled)
    check_apply(cli, config, pool, set_file, pairs, truth, machine, labelled, judged_by)
    check_runs_under_each_label_choice(cli, config, set_file, rankings)


def check_calibration(cli, config, pool, pairs, truth, machine, labelled, judged_by) -> None:
    both = [pair for pair in pairs if pair[0] in labelled]
    human_yes = [truth[p] for p in both]
    machine_yes = [machine[p] for p in both]
    result = cli("judge", "calibrate", str(pool), "--json", "--config", str(config))
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    count = {
        (h, m): sum(1 for p in both if (truth[p], machine[p]) == (h == "yes", m == "yes"))
        for h in ("yes", "no")
        for m in ("yes", "no")
    }
    assert report["confusion"] == {f"human_{h}_machine_{m}": n for (h, m), n in count.items()}
    assert (report["rows"], report["n"], report["judged_by"]) == (len(pairs), len(both), [judged_by])
    assert report["machine_only_rows"] == len(pairs) - len(both)
    assert report["human_yes_rate"] == pytest.approx(sum(human_yes) / len(both))
    assert report["machine_yes_rate"] == pytest.approx(sum(machine_yes) / len(both))
    assert report["precision"] == pytest.approx(count[("yes", "yes")] / (count[("yes", "yes")] + count[("no", "yes")]))
    assert report["recall"] == pytest.approx(count[("yes", "yes")] / (count[("yes", "yes")] + count[("yes", "no")]))
    kappa = own_kappa(count, len(both))
    assert report["kappa"] == pytest.approx(kappa) == pytest.approx(cohen_kappa_score(human_yes, machine_yes))
    low, high = report["kappa_interval"]
    assert low < kappa < high and 0.4 < kappa < 0.95  # a 15% flip: a good judge, not a perfect one


def check_ranking(cli, config, pool, set_file, rankings, pairs, truth, machine, labelled) -> None:
    """The retrievers' top-3 under the human answers, and with the machine's on the rows no person answered."""
    base = {q["id"]: set(q["expected_document_ids"]) for q in read_jsonl(set_file)[1:]}
    human = {q: base[q] | {d for (p, d) in pairs if p == q and truth[(p, d)] and p in labelled} for q in base}
    both = {q: human[q] | {d for (p, d) in pairs if p == q and machine[(p, d)] and p not in labelled} for q in base}
    ranking = json.loads(cli("judge", "calibrate", str(pool), "--json", "--config", str(config)).stdout)["ranking"]
    scores = {
        choice: {n: hit_rate(rankings[n], labels, 3) for n in RETRIEVERS}
        for choice, labels in (("human", human), ("human+machine", both))
    }
    assert ranking["figure"] == "top3"
    assert ranking["scores"] == {choice: pytest.approx(values) for choice, values in scores.items()}
    tau = kendalltau(*[[scores[choice][n] for n in RETRIEVERS] for choice in scores]).statistic
    assert ranking["kendall_tau"] == pytest.approx(tau)


def check_estimates(cli, config, pool, set_file, rankings, pairs, truth, machine, labelled) -> None:
    result = cli("judge", "calibrate", str(pool), "--estimate", "--json", "--config", str(config))
    assert result.exit_code == 0, result.stderr
    estimates = json.loads(result.stdout)["estimates"]
    pooled = {q for q, _ in pairs}
    assert estimates["labelled_questions"] == labelled and estimates["pooled_questions"] == len(pooled)
    base = {q["id"]: set(q["expected_document_ids"]) for q in read_jsonl(set_file)[1:]}
    human = {q: base[q] | {d for (p, d) in pairs if p == q and truth[(p, d)]} for q in base}
    filled = {q: base[q] | {d for (p, d) in pairs if p == q and machine[(p, d)]} for q in base}
    for name in RETRIEVERS:
        for k in (1, 3):
            figure = estimates["retrievers"][name][f"top{k}"]
            hit = lambda ranking, labels, k=k: float(bool(set(ranking[:k]) & labels))  # noqa: E731
            assert figure["machine_filled"] == pytest.approx(hit_rate(rankings[name], filled, k))
            value, half = ppi(hit, rankings[name], pooled, labelled, filled, human)
            assert figure["prediction_powered"]["value"] == pytest.approx(value)
            assert figure["prediction_powered"]["interval"] == pytest.approx([max(0.0, value - half), min(1.0, value + half)])
            exact = sum(hit(rankings[name][q], human[q]) for q in rankings[name] if q not in pooled)
            share = len(pooled) / len(rankings[name])
            own = share * statistics.fmean(hit(rankings[name][q], human[q]) for q in labelled) + exact / len(rankings[name])
            assert figure["human_only"]["value"] == pytest.approx(own)


def check_apply(cli, config, pool, set_file, pairs, truth, machine, labelled, judged_by) -> None:
    n = sum(1 for p in pairs if p[0] in labelled)
    first = {q["id"]: q["expected_document_ids"] for q in read_jsonl(set_file)[1:]}
    before = set_file.read_bytes()
    apply = ("judge", "apply", str(pool), str(set_file), "--machine", "--config", str(config))
    for judging, problem in (({"min_calibration_rows": n + 1}, f"needs >= {n + 1}"), ({"min_kappa": 0.99}, "needs >= 0.99")):
        edit_config(config, judging=judging)
        refused = cli(*apply)
        assert refused.exit_code == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        assert problem in refused.stderr and f"n={n} " in refused.stderr
        assert set_file.read_bytes() == before
    edit_config(config, judging={})
    applied = cli(*apply)
    assert applied.exit_code == 0, applied.stderr
    assert "FORCED" not in applied.stdout

    question_set = load_question_set_file(set_file)
    assert question_set.machine_judged_by == judged_by
    assert question_set.machine_calibration.n == n and not question_set.machine_calibration.forced
    for question in question_set.questions:
        mine = [d for q, d in pairs if q == question.id]
        people = question.id in labelled
        assert set(question.expected_document_ids) == set(first[question.id]) | {
            d for d in mine if people and truth[(question.id, d)]
        }
        assert set(question.rejected_document_ids) == {d for d in mine if people and not truth[(question.id, d)]}
        assert set(question.machine_expected_document_ids) == {d for d in mine if not people and machine[(question.id, d)]}
        assert set(question.machine_rejected_document_ids) == {d for d in mine if not people and not machine[(question.id, d)]}
    raw = read_jsonl(set_file)
    assert raw[0]["machine_judged_by"] == judged_by


def set_labels(set_file: Path) -> dict[str, dict[str, set[str]]]:
    """Each question's scoring labels under each choice, from the set file read back."""
    question_set = load_question_set_file(set_file)
    human = {q.id: set(q.expected_document_ids) for q in question_set.questions}
    both = {q.id: human[q.id] | set(q.machine_expected_document_ids) for q in question_set.questions}
    return {"human": human, "human+machine": both}


def judged_ids(set_file: Path) -> dict[str, dict[str, set[str]]]:
    """Per question, the ids a person judged (judged@k) and those a person or the machine judged (judged_any@k)."""
    questions = load_question_set_file(set_file).questions
    people = {q.id: set(q.judged_document_ids) for q in questions}
    machine = {q.id: set(q.machine_expected_document_ids + q.machine_rejected_document_ids) for q in questions}
    return {"judged": people, "judged_any": {q: people[q] | machine[q] for q in people}}


def check_runs_under_each_label_choice(cli, config, set_file, rankings) -> None:
    labels = set_labels(set_file)
    assert labels["human"] != labels["human+machine"]
    runs = {}
    for choice in ("human", "human+machine"):
        for name in RETRIEVERS:
            result = cli("run", SET_ID, name, "--config", str(config), "--json", "--labels", choice)
            assert result.exit_code in (0, 1), result.stderr
            document = runs[(choice, name)] = json.loads(result.stdout)
            assert document["labels"] == choice
            ranked = {q["id"]: q["retrieved_document_ids"] for q in document["questions"]}
            assert ranked == rankings[name]
            for key, judged in judged_ids(set_file).items():
                assert document["metrics"][f"{key}@3"] == pytest.approx(judged_share(ranked, judged)), (choice, key)
            for k in (1, 3):
                assert document[f"top{k}_hit_rate"] == pytest.approx(hit_rate(ranked, labels[choice], k)), (choice, name, k)
        terminal = cli("run", SET_ID, "bm25_a", "--config", str(config), "--labels", choice)
        assert f"labels {choice})" in terminal.stdout, terminal.stdout
        markdown = cli("report", SET_ID, "bm25_a", "--config", str(config), "--labels", choice)
        assert markdown.exit_code in (0, 1), markdown.stderr
        assert f"questions, labels {choice}), compared with run" in markdown.stdout, markdown.stdout
        compared = cli("compare", SET_ID, *RETRIEVERS, "--config", str(config), "--json", "--labels", choice)
        document = json.loads(compared.stdout)
        assert document["labels"] == choice
        for run in document["runs"]:
            assert run["top3_hit_rate"] == pytest.approx(hit_rate(rankings[run["retriever"]], labels[choice], 3))

    # the human+machine run's baseline is the human-labelled one, rescored under human+machine labels
    regression = runs[("human+machine", "bm25_b")]["regression"]
    assert regression["baseline_labels"] == "human"
    assert regression["baseline_run_id"] == runs[("human", "bm25_b")]["run_id"]
    assert "Baseline rescored under the current labels" in regression["summary"]
    assert regression["top1_delta"] == regression["top3_delta"] == 0.0  # the same rankings, scored alike


def run_rankings(cli, config, retriever) -> dict[str, list[str]]:
    result = cli("run", SET_ID, retriever, "--config", str(config), "--json")
    assert result.exit_code in (0, 1), result.stderr
    return {q["id"]: q["retrieved_document_ids"] for q in json.loads(result.stdout)["questions"]}
