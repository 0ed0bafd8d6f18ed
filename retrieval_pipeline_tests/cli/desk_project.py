"""The support-desk project the label tests grow: a three-question set, a corpus, and two run files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import yaml

SET_FILE = """\
# The support-desk set: labelled by the docs team.
identifier: desk.small
name: Desk questions
description: three questions
questions:
  - id: q1
    question: how do I reset my password
    form: match
    expected_document_ids: [d1]  # the reset page
  - id: q2
    question: where are invoices kept
    form: gap
    expected_document_ids: [d2]
  - id: q3
    question: can I pay in bitcoin
    form: gap
    expected_document_ids: []  # nothing answers it, so far
"""
CORPUS = [
    {"_id": "d1", "title": "Password reset", "text": "Open settings and choose reset password."},
    {"_id": "d2", "title": "Invoices", "text": "Invoices are kept under billing."},
    {"_id": "n1", "title": "Account recovery", "text": "Recover your account by resetting the password. " * 20},
    {"_id": "n2", "title": "Billing overview", "text": "An overview of billing."},
    {"_id": "n3", "title": "Payment methods", "text": "We accept cards and bitcoin."},
]


def write_run(root: Path, name: str, rankings: dict[str, list[str]]) -> None:
    lines = [json.dumps({"query_id": question_id, "document_ids": ids}) for question_id, ids in rankings.items()]
    (root / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def make_desk(root: Path) -> Path:
    """`old` ranks the labelled documents; `new` (an embedding swap) ranks documents nobody judged."""
    root.mkdir()
    (root / "desk.yaml").write_text(SET_FILE, encoding="utf-8")
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in CORPUS), encoding="utf-8")
    write_run(root, "old", {"q1": ["d1"], "q2": ["d2"], "q3": []})
    write_run(root, "new", {"q1": ["n1", "d1"], "q2": ["n2", "d1"], "q3": ["n3"]})
    retrievers = {
        name: {"kind": "run_file", "path": f"{name}.jsonl", "format": "jsonl", "corpus": "corpus.jsonl"}
        for name in ("old", "new")
    }
    config = {"store": "results", "question_sets": [{"file": "desk.yaml"}], "retrievers": retrievers}
    (root / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return root


def evaluate(cli, desk: Path, retriever: str) -> dict:
    result = cli("run", "desk.small", retriever, "--config", str(desk / "config.yaml"), "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def pool(cli, desk: Path, out: str, *retrievers: str):
    return cli("pool", "desk.small", *retrievers, "--depth", "3", "--out", str(desk / out), "--config", str(desk / "config.yaml"))


def apply(cli, desk: Path, judging_file: str, set_file: str = "desk.yaml"):
    return cli("judge", "apply", str(desk / judging_file), str(desk / set_file), "--config", str(desk / "config.yaml"))


def read_csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def answer(path: Path, answers: dict[tuple[str, str], str], quoting: int = csv.QUOTE_MINIMAL) -> str:
    """The pooled file with its `judgement` cells filled, saved as a spreadsheet (or a tool) saves it; its text."""
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for row in rows:
            row["judgement"] = answers.get((row["question_id"], row["document_id"]), "")
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    else:
        rows = read_csv(path)
        for row in rows:
            row["judgement"] = answers.get((row["question_id"], row["document_id"]), "")
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]), quoting=quoting)
            writer.writeheader()
            writer.writerows(rows)
    return path.read_text(encoding="utf-8")
