"""What the judge tests build: a judge's configuration, rows to judge, and a project made of the demo."""

from __future__ import annotations

from pathlib import Path

import yaml
from chat_service import TOKEN_VAR

import retrieval_pipeline.demo

DEMO = Path(retrieval_pipeline.demo.__file__).resolve().parent
QUESTIONS = 12
FAST = {"timeout_seconds": 20, "retries": 1, "backoff_seconds": 0.01}


def openai_judge(url: str, **params) -> dict:
    return {
        "kind": "openai",
        "url": url,
        "model": "minilm-judge",
        "headers": {"Authorization": {"env": TOKEN_VAR, "prefix": "Bearer "}},
        **FAST,
        **params,
    }


def numbered_rows(count: int) -> list[dict]:
    """Unjudged rows of distinct questions and texts, for tests about a pass rather than its grades."""
    return [
        {
            "question_id": f"q{n}",
            "document_id": f"d{n}",
            "judgement": "",
            "question": f"question {n}",
            "title": "",
            "text": f"text {n}",
        }
        for n in range(count)
    ]


def demo_project(root: Path, questions: int = QUESTIONS) -> Path:
    """The demo's first `questions` questions and its stemmed BM25, in a project of their own."""
    demo_set = yaml.safe_load((DEMO / "demo.cranfield.yaml").read_text(encoding="utf-8"))
    demo_set["questions"] = demo_set["questions"][:questions]
    root.mkdir(parents=True, exist_ok=True)
    (root / "set.yaml").write_text(yaml.safe_dump(demo_set, sort_keys=False), encoding="utf-8")
    demo_config = yaml.safe_load((DEMO / "config.yaml").read_text(encoding="utf-8"))
    bm25 = {**demo_config["retrievers"]["bm25_stemmed"], "corpus": str(DEMO / "cranfield-corpus.jsonl.gz")}
    config = {"store": "store", "question_sets": [{"file": "set.yaml"}], "retrievers": {"bm25": bm25}}
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return root / "config.yaml"
