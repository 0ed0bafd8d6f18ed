"""Fixtures of the generator tests: the stand-in chat endpoint (generation_service), the command line with
the endpoint's secret set, and a project made of the embedded demo with a query log of its own."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judges"))  # the judges' endpoint, secret and demo project
from generation_service import SECRET, TOKEN_VAR, GenerationService  # noqa: E402
from local_servers import running  # noqa: E402

from retrieval_pipeline.cli import main  # noqa: E402
from retrieval_pipeline.core.base.registry import installed_entry_points  # noqa: E402
from retrieval_pipeline.core.retrieval.generators import GENERATOR_KINDS_GROUP  # noqa: E402


@pytest.fixture(autouse=True)
def generator_kinds_installed():
    """The built-in kinds are entry points, read from the installed metadata of retrieval-pipeline."""
    if "extractive" not in {entry.name for entry in installed_entry_points(GENERATOR_KINDS_GROUP)}:
        pytest.skip(f"the installed retrieval-pipeline predates the {GENERATOR_KINDS_GROUP} entry points: pip install -e . again")


@pytest.fixture
def service() -> GenerationService:
    with running(GenerationService()) as server:
        yield server


@pytest.fixture
def cli(monkeypatch, tmp_path) -> Callable[..., Result]:
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    monkeypatch.setenv("RETRIEVAL_EVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    return invoke
