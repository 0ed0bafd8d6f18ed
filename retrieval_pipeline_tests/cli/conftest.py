"""Fixtures for the command-line tests: a plugin distribution with test retriever kinds, and a small
project (configuration, set file, ranking files) in tmp_path. Nothing is written outside tmp_path."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from cli_helpers import HALF, HERE, PERFECT, SMALL_SET, Project
from click.testing import CliRunner, Result
from desk_project import make_desk

from retrieval_pipeline.cli import main


@pytest.fixture(scope="session")
def plugin_dir(tmp_path_factory) -> Path:
    """A folder holding `cli_fake_kinds` and a dist-info declaring its kinds, as `pip install` would."""
    folder = tmp_path_factory.mktemp("plugin")
    shutil.copy(HERE / "cli_fake_kinds.py", folder / "cli_fake_kinds.py")
    dist_info = folder / "cli_fake_kinds-0.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: cli-fake-kinds\nVersion: 0.1\n")
    (dist_info / "entry_points.txt").write_text(
        "[retrieval_pipeline.retrievers]\n"
        "cli_table = cli_fake_kinds:TableKind\n"
        "cli_exploding = cli_fake_kinds:ExplodingKind\n"
        "cli_leaky = cli_fake_kinds:LeakyKind\n"
    )
    return folder


@pytest.fixture
def plugins(plugin_dir: Path, monkeypatch) -> Path:
    """The test kinds installed for this test only (in-process); subprocesses get them via PYTHONPATH."""
    monkeypatch.syspath_prepend(str(plugin_dir))
    return plugin_dir


@pytest.fixture
def project(tmp_path: Path, plugins, monkeypatch) -> Project:
    """cli.small (2 questions) with retrievers `good` (perfect), `half` (misses q2) and `flaky` (errors on q2)."""
    monkeypatch.setenv("RETRIEVAL_EVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)
    root = tmp_path / "project"
    root.mkdir()
    (root / "small.yaml").write_text(yaml.safe_dump(SMALL_SET, sort_keys=False), encoding="utf-8")
    config = {
        "store": "results",
        "question_sets": [{"file": "small.yaml"}],
        "retrievers": {
            "good": {"kind": "cli_table", "rankings": "good.json"},
            "half": {"kind": "cli_table", "rankings": "half.json"},
            "flaky": {"kind": "cli_table", "rankings": "flaky.json"},
        },
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    result = Project(root, root / "config.yaml", root / "results")
    result.rankings("good", PERFECT)
    result.rankings("half", HALF)
    result.rankings("flaky", {"alpha question": ["d1"], "beta question": None})
    return result


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    """The support-desk project of the label tests (see desk_project)."""
    return make_desk(tmp_path / "desk")


@pytest.fixture
def cli() -> Callable[..., Result]:
    """Invoke `retrieval-eval` in-process; stdout and stderr are kept apart."""

    def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
        return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)

    return invoke
