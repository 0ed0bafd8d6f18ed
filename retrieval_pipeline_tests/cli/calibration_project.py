"""A project for the machine-label tests: 40 questions, three run-file retrievers that rank a shared pool of
documents differently, and a judging file pooled from their stored runs, answered by a person on a random
part and by a machine judge that flips a known share of a hidden truth on every row."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import yaml
from desk_project import read_csv

QUESTIONS = 40
RETRIEVERS = ("alpha", "beta", "gamma")
SKILL = {"alpha": 0.7, "beta": 0.5, "gamma": 0.3}
"""Each retriever's chance of ranking a truly relevant document first: the ranking the labels should find."""


def truth(question: int, document: str) -> bool:
    """The hidden relevance the person answers by: documents r0 and r1 of each question."""
    return document in (f"q{question}-r0", f"q{question}-r1")


def make_project(root: Path, seed: int = 7) -> Path:
    generator = random.Random(seed)
    root.mkdir()
    questions = [
        {"id": f"q{i}", "question": f"question number {i}", "form": "match", "expected_document_ids": [f"q{i}-r0"]}
        for i in range(QUESTIONS)
    ]
    (root / "pool.yaml").write_text(
        yaml.safe_dump({"identifier": "pool.set", "name": "Pool set", "questions": questions}), encoding="utf-8"
    )
    for name in RETRIEVERS:
        lines = []
        for i in range(QUESTIONS):
            relevant = [f"q{i}-r1"] if generator.random() < SKILL[name] else []
            others = generator.sample([f"q{i}-n{j}" for j in range(6)] + [f"q{i}-r0"], 4)
            lines.append(json.dumps({"query_id": f"q{i}", "document_ids": relevant + [d for d in others if d not in relevant]}))
        (root / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    retrievers = {name: {"kind": "run_file", "path": f"{name}.jsonl", "format": "jsonl"} for name in RETRIEVERS}
    config = {"store": "results", "question_sets": [{"file": "pool.yaml"}], "retrievers": retrievers}
    (root / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return root


def run_and_pool(cli, root: Path, out: str = "pool.csv") -> Path:
    config = str(root / "config.yaml")
    for name in RETRIEVERS:
        result = cli("run", "pool.set", name, "--config", config, "--json")
        assert result.exit_code in (0, 1), result.stderr
    pooled = cli("pool", "pool.set", "--depth", "3", "--out", str(root / out), "--config", config)
    assert pooled.exit_code == 0, pooled.stderr
    return root / out


def answer_rows(
    path: Path, human_share: float, flip: float, seed: int = 11, judge: str = "umbrela@abc123", whole_questions: bool = False
) -> list[dict]:
    """Every row gets a machine answer (the truth, flipped with chance `flip`), a random `human_share` of
    them (or with `whole_questions`, every row of a random `human_share` of the questions) the truth as a
    person's answer; the file is saved as a spreadsheet saves it."""
    generator = random.Random(seed)
    rows = read_csv(path)
    chosen = {f"q{i}" for i in range(QUESTIONS) if generator.random() < human_share}
    for row in rows:
        relevant = truth(int(row["question_id"][1:]), row["document_id"])
        machine = relevant if generator.random() >= flip else not relevant
        row["machine_judgement"] = "yes" if machine else "no"
        row["machine_grade"] = "3" if machine else "0"
        row["judged_by"] = judge
        answered = row["question_id"] in chosen if whole_questions else generator.random() < human_share
        row["judgement"] = ("yes" if relevant else "no") if answered else ""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def judged_project(cli, root: Path, flip: float) -> tuple[Path, Path, list[dict]]:
    """The project run and pooled, half its rows answered by a person, all by a judge flipping `flip` of them."""
    make_project(root)
    pool = run_and_pool(cli, root)
    return root, pool, answer_rows(pool, human_share=0.5, flip=flip)
