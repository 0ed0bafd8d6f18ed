"""A search service that answers slowly and counts what it was asked, and commands started as a user
starts them, so a test can press Ctrl-C (SIGINT) at a known moment: once the service has seen N questions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml
from http_fakes import serving

PROJECT_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class SlowSearch:
    """How many questions the service has been asked so far (each answered after `delay` seconds)."""

    url: str
    asked: list[int]

    def wait_for(self, count: int, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while self.asked[0] < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"the service saw {self.asked[0]} questions, not {count}, within {timeout} s")
            time.sleep(0.01)


@contextmanager
def slow_search(delay: float = 0.05) -> Iterator[SlowSearch]:
    asked = [0]
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                asked[0] += 1
            time.sleep(delay)
            data = json.dumps({"results": ["d1", "d2"]}).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the command was interrupted while waiting for this answer
                pass

    with serving(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as url:
        yield SlowSearch(url, asked)


def interrupt_project(root: Path, url: str, retrievers: Sequence[str], questions: int = 20) -> Path:
    """One set (`slow.set`, `questions` questions) and HTTP retrievers of the given names, one question at a time."""
    root.mkdir(parents=True, exist_ok=True)
    question_set = {
        "identifier": "slow.set",
        "name": "asked slowly",
        "description": "questions a slow service answers",
        "questions": [
            {"id": f"q{n}", "question": f"question {n}", "form": "match", "expected_document_ids": ["d1"]}
            for n in range(1, questions + 1)
        ],
    }
    (root / "set.yaml").write_text(yaml.safe_dump(question_set, sort_keys=False), encoding="utf-8")
    config = {
        "store": "store",
        "question_sets": [{"file": "set.yaml"}],
        "retrievers": {name: {"kind": "http", "url": url, "concurrency": 1, "retries": 0} for name in retrievers},
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return root / "config.yaml"


def start(arguments: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """`retrieval-eval ARGUMENTS` in a child process of its own, as a shell starts it."""
    python_path = os.pathsep.join(p for p in (str(PROJECT_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    child_env = {**os.environ, "PYTHONPATH": python_path, "DAGSTER_HOME": str(cwd / "dagster_home"), **(env or {})}
    child_env.pop("RETRIEVAL_EVAL_CONFIG", None)
    command = [sys.executable, "-c", "from retrieval_pipeline.cli import main; main()", *arguments]
    return subprocess.Popen(command, cwd=cwd, env=child_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def interrupt(process: subprocess.Popen, timeout: float = 120.0) -> tuple[int, str, str]:
    """Ctrl-C, as a terminal sends it to the command; the exit code and both outputs once it has ended."""
    process.send_signal(signal.SIGINT)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    finally:
        process.kill()  # a command that did not stop is never left running behind the suite
    return process.returncode, stdout, stderr
