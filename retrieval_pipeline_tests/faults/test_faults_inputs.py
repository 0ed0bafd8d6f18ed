"""Every bad input, through the real command line in a child process: one line on stderr naming the file,
key, question id or option, the documented exit code (2, or 1 for an unknown identifier), no traceback,
and the result store byte for byte as it was. Valid input in an unusual dress (a byte-order mark) works.

The store already holds a real BM25 run, so "untouched" means something. Each case runs in its own copy
of the project; the selected cases run as concurrent child processes, since each start costs ~0.3 s.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from input_fault_cases import CASES, CORPUS, RUN, Case, config, set_yaml

pytestmark = pytest.mark.slow

WORKERS = 4
LONGEST_LINE = 1200  # an error quotes at most ~200 characters of any value, however large the value


@dataclass(frozen=True)
class Outcome:
    folder: Path
    exit_code: int
    stdout: str
    stderr: str
    store_before: str
    store_after: str


def command() -> list[str]:
    script = Path(sys.executable).with_name("retrieval-eval")
    return [str(script)] if script.exists() else [sys.executable, "-c", "from retrieval_pipeline.cli import main; main()"]


def environment(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RETRIEVAL_EVAL_CONFIG", "RETRIEVAL_EVAL_DEBUG")}
    return {**env, "RETRIEVAL_EVAL_CACHE": str(cache), "COLUMNS": "160"}


def write(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)


def tree_digest(folder: Path) -> str:
    """Names of every file and folder under `folder` and the files' bytes: any write, new folder, rename
    or removal changes it."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        content = path.read_bytes() if path.is_file() else b"<folder>"
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + content + b"\0")
    return digest.hexdigest()


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A configuration, a set, a corpus, and a store holding one complete run of them."""
    root = tmp_path_factory.mktemp("inputs-project")
    env = environment(tmp_path_factory.mktemp("inputs-cache"))
    write(root, {"config.yaml": config(), "set.yaml": set_yaml(), "corpus.jsonl": CORPUS})
    result = subprocess.run([*command(), *RUN], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert list((root / "results").rglob("*.parquet")), "the setup run stored nothing"
    return root, env


@pytest.fixture(scope="module")
def outcomes(project, request, tmp_path_factory) -> dict[str, Outcome]:
    """Only the cases selected for this session run (`-k` keeps a single case quick)."""
    root, env = project
    selected = {
        item.callspec.params["case"].id
        for item in request.session.items
        if item.module is request.module and hasattr(item, "callspec")
    }
    cases = [case for case in CASES if case.id in selected]
    base = tmp_path_factory.mktemp("inputs-cases")

    def attempt(case: Case) -> Outcome:
        folder = base / case.id
        shutil.copytree(root, folder)
        write(folder, case.files)
        before = tree_digest(folder / "results")
        result = subprocess.run([*command(), *case.args], cwd=folder, env=env, capture_output=True, text=True, timeout=300)
        after = tree_digest(folder / "results")
        return Outcome(folder, result.returncode, result.stdout, result.stderr, before, after)

    with ThreadPoolExecutor(WORKERS) as pool:
        return dict(zip((case.id for case in cases), pool.map(attempt, cases)))


@pytest.mark.parametrize("case", [case for case in CASES if not case.accepted], ids=lambda case: case.id)
def test_bad_input_gets_one_line_naming_it_and_leaves_the_store_untouched(case: Case, outcomes):
    outcome = outcomes[case.id]
    lines = outcome.stderr.splitlines()

    assert outcome.exit_code == case.exit, outcome.stderr[:2000]
    assert len(lines) == 1 and lines[0].startswith("error: "), outcome.stderr[:2000]
    assert "Traceback" not in outcome.stderr and "internal error" not in outcome.stderr
    for name in case.names:
        assert name in lines[0], lines[0][:2000]
    assert len(lines[0]) <= LONGEST_LINE, lines[0][:2000]
    assert outcome.store_after == outcome.store_before
    for name in case.never_written:
        assert not (outcome.folder / name).exists()


@pytest.mark.parametrize("case", [case for case in CASES if case.accepted], ids=lambda case: case.id)
def test_valid_input_with_a_byte_order_mark_is_accepted(case: Case, outcomes):
    outcome = outcomes[case.id]

    assert outcome.exit_code == 0, outcome.stderr[:2000]
    assert outcome.stderr == ""
    for name in case.names:
        assert name in outcome.stdout
