"""Misbehaving HTTP services on 127.0.0.1 for the fault-injection suite, and the project that points at them.

Each server runs in a daemon thread on a free port; `serving()` stops it even when the test fails.
"""

from __future__ import annotations

import json
import os
import socket
import socketserver
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

from retrieval_pipeline.core.retrieval.kinds import KindParams
from retrieval_pipeline.core.retrieval.retriever_kinds import RetrieverKind

TOKEN_VAR = "FAULTS_SEARCH_TOKEN"
CORPUS_IDS = ("d1", "d2", "d3")


class JsonService(BaseHTTPRequestHandler):
    """A quiet handler answering JSON (or, given a string, that text as it is: what broken services send)."""

    def log_message(self, *args):
        pass

    def _send(self, status: int, payload) -> None:
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class EchoingSearch(JsonService):
    """Answers only `Bearer <token>`; questions mentioning `echo` get a 500 quoting the request's
    Authorization header, `reject` a 404 quoting it, `garbage` an HTML page quoting it, `path` a 500
    quoting the request's path and query (a key in the url's query with it): what broken proxies and
    careless services do, and what must never be stored or shown."""

    token = ""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        question, sent = body.get("query", ""), self.headers.get("Authorization", "")
        if sent != f"Bearer {self.token}":
            self._send(401, {"error": "unauthorized"})
        elif "echo" in question:
            self._send(500, {"error": f"overloaded while serving {sent}"})
        elif "reject" in question:
            self._send(404, {"error": f"no index for credentials {sent!r}"})
        elif "garbage" in question:
            self._send(200, f"<html>bad gateway for {sent}</html>")
        elif "path" in question:
            self._send(500, {"error": f"overloaded while serving {self.path}"})
        else:
            self._send(200, {"results": list(CORPUS_IDS)})


@contextmanager
def serving(server: socketserver.TCPServer) -> Iterator[str]:
    """The server's search URL while it serves in a daemon thread; stopped and closed on the way out.

    A socketserver rather than a bare accept loop: closing a listening socket does not wake a thread
    blocked in accept(), which then keeps the port listening for the rest of the session and answers
    whoever connects next."""
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/search"
    finally:
        server.shutdown()
        server.server_close()


def echoing_search(token: str) -> AbstractContextManager[str]:
    return serving(ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (EchoingSearch,), {"token": token})))


@contextmanager
def trickling_search(part: str, interval: float = 0.1) -> Iterator[str]:
    """A valid answer sent one byte every `interval` s: the body only, or the headers too (`all`)."""
    stop = threading.Event()

    class Trickle(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.recv(65536)
            payload = json.dumps({"results": list(CORPUS_IDS)}).encode()
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n".encode()
            if part == "body":
                self.request.sendall(head)
            try:
                for byte in payload if part == "body" else head + payload:
                    if stop.wait(interval):
                        return
                    self.request.sendall(bytes([byte]))
            except OSError:  # the client gave up, as it must
                return

    with serving(socketserver.ThreadingTCPServer(("127.0.0.1", 0), Trickle)) as url:
        try:
            yield url
        finally:
            stop.set()  # a handler still trickling ends before its next byte


def closed_port_url() -> str:
    """A port nothing listens on: bound for a moment to find a free one, then released."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/search"


def write_project(root: Path, url: str, questions: list[str], **http_params) -> Path:
    """A configuration with one set (`faults.http`) and one HTTP retriever (`search`) sending the token."""
    retriever = {"kind": "http", "url": url, "headers": {"Authorization": {"env": TOKEN_VAR, "prefix": "Bearer "}}}
    return _write_config(root, questions, {"search": {**retriever, "backoff_seconds": 0.01, **http_params}})


def write_dense_project(root: Path, url: str, questions: list[str], **encoder_params) -> Path:
    """The set `faults.http` and two retrievers over one corpus of four documents: `embedded`, a dense
    retriever encoding them at `url` (an OpenAI-compatible endpoint) two texts per request, with the
    token; `bm25`, a lexical one."""
    root.mkdir(parents=True, exist_ok=True)
    documents = [{"_id": f"d{n}", "text": f"document number {n} about {word}"} for n, word in enumerate(EMBEDDED_WORDS, 1)]
    (root / "corpus.jsonl").write_text("".join(json.dumps(document) + "\n" for document in documents), encoding="utf-8")
    encoder = {"kind": "openai", "url": url, "model": "tiny", "backoff_seconds": 0.01, "concurrency": 1, **encoder_params}
    encoder["headers"] = {"Authorization": {"env": TOKEN_VAR, "prefix": "Bearer "}}
    retrievers = {
        "embedded": {"kind": "dense", "corpus": "corpus.jsonl", "batch_size": 2, "encoder": encoder},
        "bm25": {"kind": "lexical", "corpus": "corpus.jsonl"},
    }
    return _write_config(root, questions, retrievers)


EMBEDDED_WORDS = ("wings", "engines", "glaciers", "bees")


def _write_config(root: Path, questions: list[str], retrievers: dict) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    question_set = {
        "identifier": "faults.http",
        "name": "HTTP faults",
        "description": "questions sent to a misbehaving service",
        "questions": [
            {"id": f"q{n}", "question": text, "form": "match", "expected_document_ids": ["d1"]}
            for n, text in enumerate(questions, start=1)
        ],
    }
    (root / "set.yaml").write_text(yaml.safe_dump(question_set, sort_keys=False), encoding="utf-8")
    config = {"store": "store", "cache_dir": "cache", "question_sets": [{"file": "set.yaml"}], "retrievers": retrievers}
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return root / "config.yaml"


def run_cli(config: Path, *options: str, env: dict[str, str], retriever: str = "search") -> subprocess.CompletedProcess[str]:
    """`retrieval-eval run faults.http <retriever>` showing every question."""
    return cli("run", "faults.http", retriever, "--config", str(config), "--show", "all", *options, env=env)


def cli(*arguments: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The real console script in a child process, as CI runs it."""

    script = Path(sys.executable).with_name("retrieval-eval")
    command = [str(script)] if script.exists() else [sys.executable, "-c", "from retrieval_pipeline.cli import main; main()"]
    project_root = str(Path(__file__).resolve().parents[2])  # the code under test, not an installed copy
    python_path = os.pathsep.join(p for p in (project_root, os.environ.get("PYTHONPATH", "")) if p)
    child_env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": python_path, **env}
    child_env.pop("RETRIEVAL_EVAL_CONFIG", None)
    return subprocess.run([*command, *arguments], capture_output=True, text=True, env=child_env, timeout=300)


class LeakyParams(KindParams):
    token: dict[str, str]


class LeakyKind(RetrieverKind[LeakyParams]):
    """A careless third-party retriever kind: building it fails with an error quoting its token, read
    straight from the environment. Registered by the suite as kind `faults_leaky`."""

    Params = LeakyParams

    def build(self):
        raise RuntimeError(f"login refused for token {os.environ[self.params.token['env']]!r}")
