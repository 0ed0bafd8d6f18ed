"""A project to keep generated questions apart in: the demo's first 60 questions, its three BM25 retrievers
over the Cranfield corpus, and candidates the extractive kind wrote from documents no question expects,
their source documents judged as a person would (yes, but no for the first and nothing for the second)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from generation_project import EXTRACTIVE
from judge_helpers import DEMO, demo_project

QUESTIONS = 60
RETRIEVERS = ("bm25_stemmed", "bm25_plain", "bm25_titles")


def apart_project(root: Path) -> Path:
    config_path = demo_project(root, QUESTIONS)
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    demo = yaml.safe_load((DEMO / "config.yaml").read_text(encoding="utf-8"))
    corpus = str(DEMO / "cranfield-corpus.jsonl.gz")
    config["retrievers"] = {name: {**demo["retrievers"][name], "corpus": corpus} for name in RETRIEVERS}
    config["cutoffs"] = demo["cutoffs"]
    config["generators"] = EXTRACTIVE
    config["cache_dir"] = "cache"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return config_path


def judged_candidates(cli, config: Path, count: int = 12) -> Path:
    """`generate --from corpus` then every candidate's source row answered: no, nothing, then yes."""
    out = config.parent / "candidates.jsonl"
    extractive = ("--generator", "extractive", "--out", str(out), "--config", str(config))
    result = cli("generate", "demo.cranfield", "--from", "corpus", "--count", str(count), *extractive)
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    sources = [row for row in rows if row["document_id"] == row["source_document_id"]]
    for position, row in enumerate(sources):
        row["judgement"] = ("no", "")[position] if position < 2 else "yes"
    out.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return out


def run_all(cli, config: Path, retrievers=RETRIEVERS) -> None:
    for retriever in retrievers:
        result = cli("run", "demo.cranfield", retriever, "--config", str(config))
        assert result.exit_code == 0, result.stderr
