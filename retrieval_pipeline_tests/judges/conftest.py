"""A real pool to judge: the embedded demo's first questions, ranked by real BM25 over the demo's Cranfield
corpus, pooled by `retrieval-eval pool`; and the chat-completions service that judges it (chat_service)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from chat_service import SECRET, TOKEN_VAR, ChatService, MiniLMGrader, serving
from click.testing import CliRunner, Result

import retrieval_pipeline.demo
from retrieval_pipeline.cli import main
from retrieval_pipeline.core.base.registry import installed_entry_points
from retrieval_pipeline.core.retrieval.judges import JUDGE_KINDS_GROUP

DEMO = Path(retrieval_pipeline.demo.__file__).resolve().parent
QUESTIONS = 12
DEPTH = 3
FAST = {"timeout_seconds": 20, "retries": 1, "backoff_seconds": 0.01}


@pytest.fixture(autouse=True)
def judge_kinds_installed():
    """The built-in kinds are entry points, read from the installed metadata of retrieval-pipeline."""
    if "openai" not in {entry.name for entry in installed_entry_points(JUDGE_KINDS_GROUP)}:
        pytest.skip(f"the installed retrieval-pipeline predates the {JUDGE_KINDS_GROUP} entry points: pip install -e . again")


@pytest.fixture(scope="session")
def grader() -> MiniLMGrader:
    return MiniLMGrader()


@pytest.fixture
def chat(grader) -> ChatService:
    with serving(ChatService(grader)) as server:
        yield server


@dataclass
class DemoPool:
    root: Path
    config: Path
    pool: Path

    def rows(self) -> list[dict]:
        return [json.loads(line) for line in self.pool.read_text(encoding="utf-8").splitlines()]

    def configure_judges(self, judges: dict) -> None:
        data = yaml.safe_load(self.config.read_text(encoding="utf-8"))
        data["judges"] = judges
        self.config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def openai_judge(url: str, **params) -> dict:
    return {
        "kind": "openai",
        "url": url,
        "model": "minilm-judge",
        "headers": {"Authorization": {"env": TOKEN_VAR, "prefix": "Bearer "}},
        **FAST,
        **params,
    }


@pytest.fixture
def cli(monkeypatch, tmp_path) -> Callable[..., Result]:
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    monkeypatch.setenv("RETRIEVAL_EVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    return invoke


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


@pytest.fixture
def demo_pool(cli, tmp_path) -> DemoPool:
    config = demo_project(tmp_path / "demo")
    assert cli("run", "demo.cranfield", "bm25", "--config", str(config)).exit_code == 0
    pool = tmp_path / "demo" / "pool.jsonl"
    result = cli("pool", "demo.cranfield", "--depth", str(DEPTH), "--out", str(pool), "--config", str(config))
    assert result.exit_code == 0, result.output
    return DemoPool(tmp_path / "demo", config, pool)
