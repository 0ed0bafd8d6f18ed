"""A failing HTTP service seen from the real `retrieval-eval run`: retries summarised as one line per cause
with a count, failures grouped by cause (status and endpoint) whatever their bodies say, one body quoted."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from http_fakes import TOKEN_VAR, run_cli, serving, write_project

pytestmark = pytest.mark.slow


class Struggling(BaseHTTPRequestHandler):
    """A 404 for questions mentioning `missing`, a 503 for the rest; every body quotes the question, as
    services do, so no two error texts are the same."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        question = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))["query"]
        status = 404 if "missing" in question else 503
        data = json.dumps({"error": f"cannot serve {question!r} right now"}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_retries_are_one_line_per_cause_and_failures_are_grouped_by_status_and_endpoint(tmp_path):
    questions = [f"question {n}" for n in range(6)] + ["missing one", "missing two"]
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), Struggling)) as url:
        config = write_project(tmp_path, f"{url}?api_key=k-123", questions, retries=2, concurrency=1)
        result = run_cli(config, env={TOKEN_VAR: "tok"})

    assert result.returncode == 3, result.stderr
    lines = result.stderr.splitlines()
    assert lines[:-1] == [f"retriever search: 12 retries after POST {url}: HTTP 503"]
    error = lines[-1]
    assert error.startswith(
        f"error: incomplete run: 8 of 8 questions failed; by cause: 6 × POST {url} failed after 3 attempts; last: HTTP 503, "
        f"2 × POST {url} answered HTTP 404; one answer (POST {url} failed after 3 attempts; last: HTTP 503): "
    )
    assert error.count("cannot serve") == 1  # one body quoted, not one per question
    assert "k-123" not in result.stderr  # the endpoint is named without its query


def test_one_cause_with_different_bodies_is_one_cause(tmp_path):
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), Struggling)) as url:
        config = write_project(tmp_path, url, [f"missing {n}" for n in range(5)], retries=0)
        result = run_cli(config, env={TOKEN_VAR: "tok"})

    assert result.returncode == 3
    [error] = result.stderr.splitlines()
    assert error.startswith(f"error: incomplete run: 5 of 5 questions failed: POST {url} answered HTTP 404; one answer: ")
    assert error.count("cannot serve") == 1
