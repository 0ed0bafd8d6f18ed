"""`generate` stops when it should: a count far beyond the documents there are is capped before anything
is built, and Ctrl-C ends the command at once, however long the request in flight hangs, keeping every
question already answered in the cache, in one line and without a traceback, even when pressed twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from chat_service import completion
from generation_service import SECRET, TOKEN_VAR, openai_generator
from local_servers import running
from small_project import DOCUMENTS, small_project

pytestmark = pytest.mark.slow  # commands in processes of their own, a server on 127.0.0.1

HERE = Path(__file__).resolve().parent
ANSWERED = 5  # requests answered before the generator hangs: one batch of four gathered, one more in the next


def generate_arguments(config: Path, generator: str, out: Path, count: int = 8) -> list[str]:
    """`generate small.set --from corpus`, asking `generator` for `count` questions into `out`."""
    options = ["--count", str(count), "--generator", generator, "--out", str(out), "--config", str(config)]
    return ["generate", "small.set", "--from", "corpus", *options]


def started(arguments: list[str], env: dict[str, str]) -> subprocess.Popen:
    """`retrieval-eval ARGUMENTS` as a shell starts it, in a process of its own."""
    python_path = os.pathsep.join(p for p in (str(HERE), os.environ.get("PYTHONPATH", "")) if p)
    child_env = {**os.environ, "PYTHONPATH": python_path, TOKEN_VAR: SECRET, **env}
    child_env.pop("RETRIEVAL_EVAL_CONFIG", None)
    command = [sys.executable, "-c", "from retrieval_pipeline.cli import main; main()", *arguments]
    return subprocess.Popen(command, env=child_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_count_far_beyond_the_corpus_is_capped_first_and_said(tmp_path):
    config = small_project(tmp_path, {"extractive": {"kind": "extractive"}})
    out = tmp_path / "candidates.csv"

    process = started(generate_arguments(config, "extractive", out, 10**12), {})
    try:
        stdout, stderr = process.communicate(timeout=120)
    finally:
        process.kill()

    assert process.returncode == 0, stderr
    drawable = DOCUMENTS - 2  # the two documents the set's questions expect are never drawn
    assert f"(only {drawable} of the {10**12} asked for could be drawn)" in stdout


def wait_for(asked, count: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while asked() < count:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"the generator was asked {asked()} times, not {count}"
        time.sleep(0.02)
    time.sleep(0.3)  # the command is now waiting on the hanging request


def interrupted_twice(process: subprocess.Popen) -> tuple[float, str]:
    """Ctrl-C, then Ctrl-C again half a second later if the command is still there: seconds to stop, stderr."""
    process.send_signal(signal.SIGINT)
    pressed = time.monotonic()
    try:
        process.wait(timeout=0.5)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGINT)
    try:
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    return time.monotonic() - pressed, stderr


def stopped_at_once(process: subprocess.Popen, generator: str, out: Path) -> None:
    seconds, stderr = interrupted_twice(process)

    assert process.returncode == 130, stderr
    assert stderr.strip() == (
        f"error: interrupted (Ctrl-C): the {ANSWERED} question(s) {generator} wrote in this pass are cached; {out} was "
        "not written; run the same command again to resume"
    )
    assert seconds < 2.0, f"Ctrl-C took {seconds:.1f} s to stop the command"
    assert not out.exists()


def test_ctrl_c_stops_at_once_while_a_callable_generator_hangs_keeping_what_it_answered(cli, tmp_path):
    config = small_project(tmp_path, {"slow": {"kind": "callable", "function": "stalling_generator:stalling"}})
    out, calls = tmp_path / "candidates.csv", tmp_path / "calls.txt"
    calls.touch()
    env = {"GENERATOR_CALLS": str(calls), "STALL_AFTER": str(ANSWERED)}

    process = started(generate_arguments(config, "slow", out), env)
    wait_for(lambda: len(calls.read_text(encoding="utf-8").splitlines()), ANSWERED + 1, process)
    stopped_at_once(process, "slow", out)

    os.environ["GENERATOR_CALLS"] = str(calls)  # the resumed run, in this process, never hangs
    try:
        resumed = cli(*generate_arguments(config, "slow", out), "--json")
    finally:
        del os.environ["GENERATOR_CALLS"]
    assert resumed.exit_code == 0, resumed.stderr
    assert (json.loads(resumed.stdout)["from_cache"], json.loads(resumed.stdout)["asked"]) == (ANSWERED, 8 - ANSWERED)


class StallingEndpoint(ThreadingHTTPServer):
    """A chat endpoint answering its first `answered` requests with a question each, then hanging until
    `release` is set (never answering in time, so its client's retries would go on)."""

    daemon_threads = True

    def __init__(self, answered: int):
        super().__init__(("127.0.0.1", 0), StallingHandler)
        self.lock, self.release = threading.Lock(), threading.Event()
        self.answered, self.asked = answered, 0

    def handle_error(self, request, client_address):
        """The command stopped by Ctrl-C breaks the pipe: the test's point, not a failure."""


class StallingHandler(BaseHTTPRequestHandler):
    server: StallingEndpoint

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.server.lock:
            self.server.asked += 1
            number = self.server.asked
        if number > self.server.answered:
            self.server.release.wait(60)
        data = json.dumps(completion(f"Question: how was cooling {number} measured in the tunnel?", 5)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_ctrl_c_stops_at_once_while_an_endpoint_hangs_keeping_what_it_answered(cli, tmp_path):
    with running(StallingEndpoint(ANSWERED)) as endpoint:
        url = f"http://127.0.0.1:{endpoint.server_address[1]}/v1/chat/completions"
        config = small_project(tmp_path, {"chat": openai_generator(url, concurrency=1, timeout_seconds=30, retries=3)})
        out = tmp_path / "candidates.csv"

        process = started(generate_arguments(config, "chat", out), {})
        wait_for(lambda: endpoint.asked, ANSWERED + 1, process)
        stopped_at_once(process, "chat", out)
        endpoint.release.set()
        asked_before = endpoint.asked
        endpoint.answered = 100

        resumed = cli(*generate_arguments(config, "chat", out), "--json")

    assert resumed.exit_code == 0, resumed.stderr
    assert (json.loads(resumed.stdout)["from_cache"], json.loads(resumed.stdout)["asked"]) == (ANSWERED, 8 - ANSWERED)
    assert endpoint.asked == asked_before + 8 - ANSWERED  # nothing retried behind the stopped command's back
