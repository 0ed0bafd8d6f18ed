"""A small project to generate questions in, quick enough for a command started in a process of its own:
the demo's first 12 Cranfield documents under BM25 and a set of two questions about two of them."""

from __future__ import annotations

import gzip
from pathlib import Path

import yaml
from judge_helpers import DEMO

DOCUMENTS = 12


def small_project(root: Path, generators: dict) -> Path:
    """The project's configuration, with `generators`; its set file is `set.yaml` (set `small.set`)."""
    root.mkdir(parents=True, exist_ok=True)
    with gzip.open(DEMO / "cranfield-corpus.jsonl.gz", "rt", encoding="utf-8") as corpus:
        lines = [next(corpus) for _ in range(DOCUMENTS)]
    (root / "corpus.jsonl").write_text("".join(lines), encoding="utf-8")
    questions = [
        {"id": f"q{n}", "question": f"what does document {n} study?", "form": "match", "expected_document_ids": [str(n)]}
        for n in (1, 2)
    ]
    small_set = {"identifier": "small.set", "name": "small", "description": "two questions", "questions": questions}
    (root / "set.yaml").write_text(yaml.safe_dump(small_set, sort_keys=False), encoding="utf-8")
    config = {
        "store": "store",
        "cache_dir": "cache",
        "question_sets": [{"file": "set.yaml"}],
        "retrievers": {"bm25": {"kind": "lexical", "corpus": "corpus.jsonl"}},
        "generators": generators,
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return root / "config.yaml"
