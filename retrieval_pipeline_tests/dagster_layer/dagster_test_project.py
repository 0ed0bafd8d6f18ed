"""A small project (2 sets x 2 replayed retrievers) written into a temporary folder for the Dagster tests.

The retrievers are `run_file` replays: what they return is whatever the run file says, so a test can
degrade a retriever (or rebuild its "index": a new run file is a new index version) by rewriting a file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

ALPHA = {
    "identifier": "alpha",
    "name": "Alpha (test)",
    "description": "Six questions over a made-up corpus.",
    "questions": [
        {"id": "a1", "question": "alpha one wing lift", "form": "match", "expected_document_ids": ["d1"], "hard_class": "normal"},
        {
            "id": "a2",
            "question": "alpha two drag",
            "form": "match",
            "expected_document_ids": ["d2", "d22"],
            "hard_class": "near-duplicate",
        },
        {
            "id": "a3",
            "question": "alpha three everyday words",
            "form": "gap",
            "expected_document_ids": ["d3"],
            "hard_class": "normal",
        },
        {"id": "a4", "question": "alpha four reworded", "form": "gap", "expected_document_ids": ["d4"]},
        {
            "id": "a5",
            "question": "alpha five tables",
            "form": "match",
            "expected_document_ids": ["d5"],
            "hard_class": "prose-free",
        },
        {"id": "a6", "question": "alpha six nothing answers", "form": "gap", "expected_document_ids": []},
    ],
}
BETA = {
    "identifier": "beta.small",
    "name": "Beta (test)",
    "description": "Four questions.",
    "questions": [
        {"id": "b1", "question": "beta one", "form": "match", "expected_document_ids": ["d1"]},
        {"id": "b2", "question": "beta two", "form": "gap", "expected_document_ids": ["d2"], "hard_class": "normal"},
        {"id": "b3", "question": "beta three", "form": "match", "expected_document_ids": ["d3"]},
        {"id": "b4", "question": "beta four", "form": "gap", "expected_document_ids": ["d9"]},
    ],
}
SETS = ("alpha", "beta.small")
SET_FILES = {"alpha": "sets/alpha.yaml", "beta.small": "sets/beta.json"}
RETRIEVERS = ("good", "other")

# The "good" run: every alpha question hit at top-1 (a6 expects silence: an empty ranking); on beta.small,
# b3 is a top-3-only hit and b4 a miss.
PERFECT = {
    "a1": ["d1", "d7"],
    "a2": ["d22", "d8"],
    "a3": ["d3"],
    "a4": ["d4", "d1"],
    "a5": ["d5"],
    "a6": [],
    "b1": ["d1"],
    "b2": ["d2"],
    "b3": ["d7", "d3"],
    "b4": ["d8", "d7", "d6"],
}


@dataclass(frozen=True)
class SampleProject:
    root: Path

    @property
    def config(self) -> Path:
        return self.root / "config.yaml"

    @property
    def store(self) -> Path:
        return self.root / "store"

    def run_file(self, retriever: str) -> Path:
        return self.root / "runs" / f"{retriever}.jsonl"

    def write_run(self, retriever: str, rankings: dict[str, list[str]]) -> None:
        lines = [json.dumps({"query_id": query_id, "document_ids": ids}) for query_id, ids in rankings.items()]
        self.run_file(retriever).write_text("\n".join(lines) + "\n", encoding="utf-8")


def degraded(*question_ids: str) -> dict[str, list[str]]:
    """The perfect rankings with the given questions answered by unrelated documents (misses everywhere)."""
    return {q: (["d90", "d91", "d92"] if q in question_ids else ids) for q, ids in PERFECT.items()}


def write_project(
    root: Path,
    *,
    dagster: dict | None = None,
    tolerances: dict | None = None,
    sets: tuple[str, ...] = SETS,
    retrievers: tuple[str, ...] = RETRIEVERS,
) -> SampleProject:
    """`sets` and `retrievers` keep a subset of the project (fewer partitions, a faster nightly run)."""
    project = SampleProject(root)
    (root / "sets").mkdir(parents=True, exist_ok=True)
    (root / "runs").mkdir(exist_ok=True)
    (root / "sets" / "alpha.yaml").write_text(yaml.safe_dump(ALPHA, sort_keys=False), encoding="utf-8")
    (root / "sets" / "beta.json").write_text(json.dumps(BETA), encoding="utf-8")
    project.write_run("good", PERFECT)
    project.write_run("other", degraded("a3", "b2"))
    config = {
        "store": "store",
        "question_sets": [{"file": file} for name, file in SET_FILES.items() if name in sets],
        "retrievers": {
            name: {"kind": "run_file", "path": f"runs/{name}.jsonl", "format": "jsonl"}
            for name in RETRIEVERS
            if name in retrievers
        },
        "tolerances": tolerances or {"max_top1_drop": 0.1, "max_top3_drop": 0.1},
        "dagster": dagster or {"nightly_cron": "30 3 * * *", "timezone": "Europe/Paris", "sensor_interval_seconds": 60},
    }
    project.config.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return project
