"""A project to generate questions in: the demo set's first 12 questions over the demo's Cranfield corpus,
two BM25 retrievers (title and text, titles only), and a query log of Cranfield questions the 12 do not
ask (paraphrased, counts falling off like Zipf's law) beside paraphrases of three they do ask."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from judge_helpers import DEMO, demo_project
from traffic_project import ZIPF_TOP, paraphrase

from retrieval_pipeline.core.golden.question_files import load_question_set_file

ASKED = 12
UNCOVERED = range(100, 130)
EXTRACTIVE = {"extractive": {"kind": "extractive"}}


def logged_queries() -> list[dict]:
    """Query and count of each logged line: three covered questions first, then thirty uncovered."""
    questions = load_question_set_file(DEMO / "demo.cranfield.yaml").questions
    chosen = [*questions[:3], *(questions[index] for index in UNCOVERED)]
    return [{"query": paraphrase(question.question), "count": ZIPF_TOP // rank} for rank, question in enumerate(chosen, start=1)]


def generation_project(root: Path, generators: dict, examples: bool = False) -> Path:
    """The project's configuration, with `generators` and the log `site` (examples as given)."""
    config_path = demo_project(root, ASKED)
    log = root / "site.jsonl"
    log.write_text("".join(json.dumps(row) + "\n" for row in logged_queries()), encoding="utf-8")
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    bm25 = config["retrievers"]["bm25"]
    config["retrievers"]["titles"] = {**bm25, "fields": ["title"], "min_score": 0.0}
    config["query_logs"] = {"site": {"path": "site.jsonl", "count": "count", "examples": examples}}
    config["generators"] = generators
    config["cache_dir"] = "cache"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return config_path


def generate(cli, config: Path, *args: str):
    """`retrieval-eval generate demo.cranfield ARGS --config CONFIG`."""
    return cli("generate", "demo.cranfield", *args, "--config", str(config))


def by_question(rows: list[dict]) -> dict[str, list[dict]]:
    """A judging file's rows grouped by candidate, in file order."""
    grouped: dict[str, list[dict]] = {}
    for row in rows:
        grouped.setdefault(row["question_id"], []).append(row)
    return grouped
