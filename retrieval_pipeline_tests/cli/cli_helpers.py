"""Constants and helpers shared by the command-line tests (fixtures live in conftest.py)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent

SMALL_SET = {
    "identifier": "cli.small",
    "name": "CLI test set",
    "description": "two questions",
    "questions": [
        {"id": "q1", "question": "alpha question", "form": "match", "expected_document_ids": ["d1"], "hard_class": "normal"},
        {
            "id": "q2",
            "question": "beta question",
            "form": "gap",
            "expected_document_ids": ["d2", "d3"],
            "hard_class": "near-duplicate",
        },
    ],
}
PERFECT = {"alpha question": ["d1", "x"], "beta question": ["d3", "d2"]}
HALF = {"alpha question": ["d1"], "beta question": ["x", "y", "z"]}  # q2 misses at every cut-off


@dataclass
class Project:
    root: Path
    config: Path
    store: Path

    def rankings(self, name: str, rankings: dict) -> None:
        (self.root / f"{name}.json").write_text(json.dumps(rankings), encoding="utf-8")

    def stored_summaries(self) -> list[Path]:
        return sorted(self.store.glob("summaries/**/*.parquet"))


def subprocess_env(*extra_paths: Path) -> dict[str, str]:
    """The environment for running the console script in a child process with the test plugin."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*(str(p) for p in extra_paths), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("RETRIEVAL_EVAL_CONFIG", None)
    env["COLUMNS"] = "160"
    return env


def console_script() -> Sequence[str]:
    """`retrieval-eval` from the same environment as the tests, falling back to `python -m`-style import."""
    script = Path(sys.executable).with_name("retrieval-eval")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from retrieval_pipeline.cli import main; main()"]


def as_permissions_bind() -> list[str]:
    """The prefix that runs a command bound by file permissions: root writes through any of them
    (CAP_DAC_OVERRIDE), so as root the command runs without that capability; otherwise nothing."""
    import pytest

    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root and setpriv (util-linux) is missing to drop CAP_DAC_OVERRIDE")
    return ["setpriv", "--inh-caps=-dac_override", "--bounding-set=-dac_override"]
