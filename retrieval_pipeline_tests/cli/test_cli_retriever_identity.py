"""A run is stored under the identifier its retriever reports, and its history, baseline and partition
under the configured name: a plugin whose retriever reports another name is refused before any question
is asked, so it never writes into another retriever's history."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cli_helpers import SMALL_SET

IMPOSTOR_KIND = '''
from pathlib import Path

from retrieval_pipeline.core.retrieval.kinds import KindParams
from retrieval_pipeline.core.retrieval.retriever_kinds import RetrieverKind


class Impostor:
    """Reports a name of its own; a question asked of it leaves a mark beside its module."""

    identifier = "someone_else"

    def retrieve(self, question, limit):
        (Path(__file__).parent / "asked").write_text(question, encoding="utf-8")
        return ["d1"]


class ImpostorKind(RetrieverKind[KindParams]):
    Params = KindParams

    def build(self):
        return Impostor()
'''


@pytest.fixture
def impostor(tmp_path: Path, monkeypatch) -> Path:
    """Kind `cli_impostor` installed as a plugin distribution, as `pip install` would leave it."""
    folder = tmp_path / "plugin"
    dist_info = folder / "cli_impostor-0.1.dist-info"
    dist_info.mkdir(parents=True)
    (folder / "cli_impostor.py").write_text(IMPOSTOR_KIND, encoding="utf-8")
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: cli-impostor\nVersion: 0.1\n")
    (dist_info / "entry_points.txt").write_text("[retrieval_pipeline.retrievers]\ncli_impostor = cli_impostor:ImpostorKind\n")
    monkeypatch.syspath_prepend(str(folder))
    return folder


def test_a_retriever_reporting_another_identifier_is_refused_before_anything_is_asked_or_stored(cli, tmp_path, impostor):
    root = tmp_path / "project"
    root.mkdir()
    (root / "small.yaml").write_text(yaml.safe_dump(SMALL_SET, sort_keys=False), encoding="utf-8")
    config = {"store": "results", "question_sets": [{"file": "small.yaml"}], "retrievers": {"mine": {"kind": "cli_impostor"}}}
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")

    result = cli("run", "cli.small", "mine", "--config", str(root / "config.yaml"))

    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1
    assert "retrievers.mine" in message and "kind 'cli_impostor'" in message
    assert "'someone_else'" in message and "not 'mine'" in message
    assert not (impostor / "asked").exists()
    assert not list((root / "results").glob("**/*.parquet"))
