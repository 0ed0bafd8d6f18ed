"""A real pool to judge: the embedded demo's first questions, ranked by real BM25 over the demo's Cranfield
corpus, pooled by `retrieval-eval pool`; and the chat-completions service that judges it (chat_service)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from chat_service import SECRET, TOKEN_VAR, ChatService, MiniLMGrader
from click.testing import CliRunner, Result
from judge_helpers import demo_project
from local_servers import running

from retrieval_pipeline.cli import main
from retrieval_pipeline.core.base.registry import installed_entry_points
from retrieval_pipeline.core.retrieval.judges import JUDGE_KINDS_GROUP

DEPTH = 3


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
    with running(ChatService(grader)) as server:
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


@pytest.fixture
def cli(monkeypatch, tmp_path) -> Callable[..., Result]:
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    monkeypatch.setenv("RETRIEVAL_EVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    return invoke


@pytest.fixture
def demo_pool(cli, tmp_path) -> DemoPool:
    config = demo_project(tmp_path / "demo")
    assert cli("run", "demo.cranfield", "bm25", "--config", str(config)).exit_code == 0
    pool = tmp_path / "demo" / "pool.jsonl"
    result = cli("pool", "demo.cranfield", "--depth", str(DEPTH), "--out", str(pool), "--config", str(config))
    assert result.exit_code == 0, result.output
    return DemoPool(tmp_path / "demo", config, pool)
