"""Machine labels: applied into their own fields only behind the calibration gate, never passing for human
ones, and scoring only when asked (`--labels human+machine`), every output saying which labels it used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from calibration_project import QUESTIONS, RETRIEVERS, answer_rows, judged_project, run_and_pool
from sklearn.metrics import cohen_kappa_score

from retrieval_pipeline.core.golden.fingerprints import question_fingerprint
from retrieval_pipeline.core.golden.question_files import load_question_set_file


@pytest.fixture
def project(cli, tmp_path) -> tuple[Path, Path, list[dict]]:
    return judged_project(cli, tmp_path / "project", flip=0.1)


def apply_machine(cli, root: Path, pool: Path, *options: str):
    return cli("judge", "apply", str(pool), str(root / "pool.yaml"), "--machine", "--config", str(root / "config.yaml"), *options)


def configure(root: Path, **keys) -> None:
    config = yaml.safe_load((root / "config.yaml").read_text(encoding="utf-8"))
    (root / "config.yaml").write_text(yaml.safe_dump({**config, **keys}), encoding="utf-8")


def test_machine_answers_go_to_their_own_fields_and_the_human_fingerprints_stay(cli, project):
    root, pool, rows = project
    before = load_question_set_file(root / "pool.yaml")
    result = apply_machine(cli, root, pool)
    assert result.exit_code == 0, result.stderr
    after = load_question_set_file(root / "pool.yaml")

    assert after.machine_judged_by == "umbrela@abc123"
    both = [row for row in rows if row["judgement"]]
    kappa = cohen_kappa_score([r["judgement"] for r in both], [r["machine_judgement"] for r in both])
    assert after.machine_calibration.n == len(both) and after.machine_calibration.kappa == pytest.approx(kappa)
    assert not after.machine_calibration.forced
    for question in after.questions:
        mine = [row for row in rows if row["question_id"] == question.id]
        human_yes = {row["document_id"] for row in mine if row["judgement"] == "yes"}
        machine_only = {row["document_id"]: row["machine_judgement"] for row in mine if not row["judgement"]}
        assert set(question.expected_document_ids) == set(before.question(question.id).expected_document_ids) | human_yes
        assert set(question.machine_expected_document_ids) == {d for d, a in machine_only.items() if a == "yes"}
        assert set(question.machine_rejected_document_ids) == {d for d, a in machine_only.items() if a == "no"}
        assert not set(question.judged_document_ids) & set(
            question.machine_expected_document_ids + question.machine_rejected_document_ids
        )
        fingerprint = question_fingerprint(
            question.question,
            question.expected_document_ids,
            question.form.value,
            question.hard_class,
            question.rejected_document_ids,
        )
        unlabelled = question.model_copy(update={"machine_expected_document_ids": (), "machine_rejected_document_ids": ()})
        assert fingerprint == question_fingerprint(
            unlabelled.question,
            unlabelled.expected_document_ids,
            unlabelled.form.value,
            unlabelled.hard_class,
            unlabelled.rejected_document_ids,
        )
    assert "Machine labels of umbrela@abc123 (kappa" in result.stdout


def test_a_machine_label_listed_beside_a_human_one_is_refused_naming_the_question(tmp_path):
    text = (
        "identifier: s\nname: S\nmachine_judged_by: j@1\nquestions:\n"
        "  - {id: q1, question: a, form: match, expected_document_ids: [d1], machine_expected_document_ids: [d1]}\n"
    )
    (tmp_path / "s.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="question 'q1'.*'d1' is judged by a person"):
        load_question_set_file(tmp_path / "s.yaml")


def test_machine_labels_without_the_judge_named_are_refused(tmp_path):
    text = "identifier: s\nname: S\nquestions:\n  - {id: q1, question: a, form: match, expected_document_ids: [d1], machine_rejected_document_ids: [d2]}\n"
    (tmp_path / "s.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="machine_judged_by must name the judge"):
        load_question_set_file(tmp_path / "s.yaml")


@pytest.mark.parametrize(
    ("judging", "problem"),
    [
        ({"min_calibration_rows": 500}, "needs >= 500"),
        ({"min_kappa": 0.99}, "needs >= 0.99"),
    ],
    ids=["too-few-rows", "kappa-too-low"],
)
def test_a_judge_below_the_thresholds_is_refused_in_one_line_and_the_set_stays(cli, project, judging, problem):
    root, pool, _ = project
    configure(root, judging=judging)
    before = (root / "pool.yaml").read_bytes()
    result = apply_machine(cli, root, pool)
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and problem in result.stderr and "kappa 0." in result.stderr
    assert "n=" in result.stderr
    assert (root / "pool.yaml").read_bytes() == before


def test_force_applies_below_the_thresholds_and_the_set_says_so(cli, project):
    root, pool, _ = project
    configure(root, judging={"min_calibration_rows": 500})
    result = apply_machine(cli, root, pool, "--force")
    assert result.exit_code == 0, result.stderr
    assert "FORCED" in result.stdout
    assert load_question_set_file(root / "pool.yaml").machine_calibration.forced is True


def test_a_file_judged_by_another_judge_than_the_sets_is_refused(cli, project, tmp_path):
    root, pool, _ = project
    assert apply_machine(cli, root, pool).exit_code == 0
    other = run_and_pool(cli, root, "again.csv")
    answer_rows(other, human_share=0.9, flip=0.1, judge="other@ffff")
    result = cli("judge", "apply", str(other), str(root / "pool.yaml"), "--machine", "--config", str(root / "config.yaml"))
    assert result.exit_code == 2 and "one judge's answers per set" in result.stderr and "umbrela@abc123" in result.stderr


def hit_rate_top3(root: Path, retriever: str, labels: dict[str, set[str]]) -> float:
    runs = [json.loads(line) for line in (root / f"{retriever}.jsonl").read_text(encoding="utf-8").splitlines()]
    return sum(bool(set(run["document_ids"][:3]) & labels[run["query_id"]]) for run in runs) / len(runs)


def test_labels_choose_what_scores_and_every_output_says_which(cli, project):
    root, pool, _ = project
    assert apply_machine(cli, root, pool).exit_code == 0
    question_set = load_question_set_file(root / "pool.yaml")
    human = {q.id: set(q.expected_document_ids) for q in question_set.questions}
    both = {q.id: set(q.expected_document_ids) | set(q.machine_expected_document_ids) for q in question_set.questions}
    config = str(root / "config.yaml")

    for labels, expected in (("human", human), ("human+machine", both)):
        result = cli("run", "pool.set", "alpha", "--config", config, "--json", "--labels", labels)
        assert result.exit_code in (0, 1), result.stderr
        document = json.loads(result.stdout)
        assert document["labels"] == labels
        assert document["top3_hit_rate"] == pytest.approx(hit_rate_top3(root, "alpha", expected))
    terminal = cli("run", "pool.set", "beta", "--config", config, "--labels", "human+machine")
    assert "labels human+machine" in terminal.stdout
    markdown = cli("report", "pool.set", "beta", "--config", config)  # configuration default: human
    assert "labels human" in markdown.stdout and "Rescored under human labels (stored under human+machine)" in markdown.stdout
    compared = cli("compare", "pool.set", *RETRIEVERS, "--config", config, "--json", "--labels", "human+machine")
    document = json.loads(compared.stdout)
    assert document["labels"] == "human+machine"
    rates = {run["retriever"]: run["top3_hit_rate"] for run in document["runs"]}
    assert rates == {name: pytest.approx(hit_rate_top3(root, name, both)) for name in RETRIEVERS}
    assert len(question_set.questions) == QUESTIONS


def test_a_baseline_stored_under_other_labels_is_rescored_not_compared_as_stored(cli, project):
    root, pool, _ = project
    assert apply_machine(cli, root, pool).exit_code == 0
    config = str(root / "config.yaml")
    first = cli("run", "pool.set", "gamma", "--config", config, "--json")  # human labels: the baseline
    second = cli("run", "pool.set", "gamma", "--config", config, "--json", "--labels", "human+machine")
    assert first.exit_code in (0, 1) and second.exit_code in (0, 1), second.stderr
    document = json.loads(second.stdout)
    regression = document["regression"]
    assert regression["baseline_run_id"] == json.loads(first.stdout)["run_id"]
    assert (document["labels"], regression["baseline_labels"]) == ("human+machine", "human")
    # same rankings, the baseline rescored under human+machine labels: nothing changed, nothing lost
    assert regression["top3_delta"] == 0.0 and regression["top1_delta"] == 0.0
    assert "Baseline rescored under the current labels: 40 relabelled questions kept" in regression["summary"]


def test_a_baseline_stored_before_the_machine_labels_counts_them_as_the_machines_when_rescored(cli, project):
    root, pool, _ = project  # every retriever ran before the machine labels were applied
    assert apply_machine(cli, root, pool).exit_code == 0
    result = cli("run", "pool.set", "gamma", "--config", str(root / "config.yaml"), "--json", "--labels", "human+machine")
    assert result.exit_code in (0, 1), result.stderr
    document = json.loads(result.stdout)
    # the same rankings under the same labels: a machine label must not read as a person's on the baseline
    deltas = document["regression"]["metric_deltas"]
    assert deltas["judged@3"] == 0.0 and deltas["judged_any@3"] == 0.0
    assert document["metrics"]["judged@3"] < document["metrics"]["judged_any@3"]


def test_labels_in_the_configuration_are_checked(cli, project):
    root, _, _ = project
    configure(root, labels="machine")
    result = cli("list", "--config", str(root / "config.yaml"))
    assert result.exit_code == 2 and "labels" in result.stderr


@pytest.mark.parametrize("labels", ["human", "human+machine"])
def test_judged_at_k_counts_people_only_and_judged_any_counts_the_machine_too(cli, project, labels):
    root, pool, _ = project
    assert apply_machine(cli, root, pool).exit_code == 0
    question_set = load_question_set_file(root / "pool.yaml")
    people = {q.id: set(q.judged_document_ids) for q in question_set.questions}
    either = {
        q.id: people[q.id] | set(q.machine_expected_document_ids + q.machine_rejected_document_ids)
        for q in question_set.questions
    }
    result = cli("run", "pool.set", "alpha", "--config", str(root / "config.yaml"), "--json", "--labels", labels)
    document = json.loads(result.stdout)
    runs = [json.loads(line) for line in (root / "alpha.jsonl").read_text(encoding="utf-8").splitlines()]

    def share(judged: dict[str, set[str]]) -> float:
        return sum(len(set(run["document_ids"][:3]) & judged[run["query_id"]]) / 3 for run in runs) / len(runs)

    assert document["metrics"]["judged@3"] == pytest.approx(share(people))
    assert document["metrics"]["judged_any@3"] == pytest.approx(share(either))
    assert share(either) > share(people)


def test_history_says_which_labels_scored_each_run(cli, project):
    root, pool, _ = project
    assert apply_machine(cli, root, pool).exit_code == 0
    config = str(root / "config.yaml")
    for labels in ("human", "human+machine"):
        assert cli("run", "pool.set", "gamma", "--config", config, "--labels", labels).exit_code in (0, 1)
    document = json.loads(cli("history", "pool.set", "gamma", "--config", config, "--json").stdout)
    assert [run["scored_under"] for run in document["runs"]] == ["human+machine", "human", "human"]  # pooling ran it first
    assert "labels human+machine" in cli("history", "pool.set", "gamma", "--config", config).stdout
