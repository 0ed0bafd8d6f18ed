"""A real HTTP search service on 127.0.0.1 for the HTTP retriever's tests, and how they build retrievers.

Endpoints by path (`route_<path>`); it counts calls per path, connections, and the most requests it
served at once. It speaks HTTP/1.1 with keep-alive, as deployed search services do, so a client's pooled
connections are reused across requests here too.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from local_servers import running  # noqa: F401 - the retriever tests import it from here

from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.retrievers.http.retriever import HttpKind, HttpRetriever

SECRET = "tok-9f3a61c2e7d84b05"
TOKEN_VAR = "RETRIEVAL_EVAL_TEST_SEARCH_TOKEN"
CORPUS = {
    "d1": "turbofan engines need inspection of fan blades after bird strikes",
    "d2": "a sourdough starter of flour and water ferments before baking",
    "d3": "alpine glaciers have lost much of their ice",
    "d4": "bees tell the hive where flowers are through a waggle dance",
    "d5": "tidal turbines convert the motion of sea water into electricity",
}


def overlap_ranking(question: str) -> list[str]:
    terms = set(question.lower().split())
    scored = [(len(terms & set(text.split())), doc) for doc, text in CORPUS.items()]
    return [doc for score, doc in sorted(scored, key=lambda item: (-item[0], item[1])) if score > 0]


class Service(ThreadingHTTPServer):
    """Endpoints by path; counts calls per path, connections, and the most requests it ever served at once."""

    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler] | None = None):
        super().__init__(("127.0.0.1", 0), handler or Handler)
        self.lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.connections = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.requests: list[dict] = []

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def handle_error(self, request, client_address):
        """A client that gave up (timeout) breaks the pipe; that is the test's point, not a failure."""


class Handler(BaseHTTPRequestHandler):
    server: Service
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # each write leaves at once, as `route_pieces` needs

    def setup(self):
        super().setup()
        with self.server.lock:
            self.server.connections += 1

    def log_message(self, *args):
        pass

    def do_GET(self):
        self._handle()

    def do_POST(self):
        self._handle()

    def _handle(self):
        url = urlsplit(self.path)
        query = {name: values[-1] for name, values in parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else {}
        server = self.server
        with server.lock:
            server.calls[url.path] += 1
            call = server.calls[url.path]
            server.in_flight += 1
            server.max_in_flight = max(server.max_in_flight, server.in_flight)
            server.requests.append({"method": self.command, "path": url.path, "query": query, "body": body})
        try:
            answer = getattr(self, "route_" + url.path.strip("/").replace("-", "_"))(query, body, call)
        finally:
            with server.lock:
                server.in_flight -= 1
        if answer is None:  # the route wrote its own answer
            return
        status, headers, payload = answer
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def route_search(self, query, body, call):
        """Checks the secret; the question arrives as `q` (GET) or `query` (POST); `delay` makes it slowish."""
        if self.headers.get("Authorization") != f"Bearer {SECRET}":
            return 401, {}, {"error": "unauthorized"}
        time.sleep(float(query.get("delay", 0)))
        question = query.get("q") or body.get("query", "")
        limit = int(query.get("limit") or body.get("limit") or len(CORPUS))
        hits = [{"doc": {"id": f"{doc}_0"}, "score": 1.0} for doc in overlap_ranking(question)[:limit]]
        return 200, {}, {"data": {"results": hits}}

    def route_ids(self, query, body, call):
        return 200, {}, {"results": overlap_ranking(body.get("query", ""))}

    def route_slow(self, query, body, call):
        time.sleep(0.5)
        return 200, {}, {"results": ["d1"]}

    def route_flaky(self, query, body, call):
        """500 for the first `fail` calls, then a normal answer."""
        if call <= int(query["fail"]):
            return 500, {}, {"error": "overloaded"}
        return self.route_ids(query, body, call)

    def route_busy(self, query, body, call):
        if call <= int(query["fail"]):
            return 429, {"Retry-After": query["after"]}, {"error": "slow down"}
        return self.route_ids(query, body, call)

    def route_garbage(self, query, body, call):
        """A broken proxy page that echoes the request's credentials."""
        return 200, {"Content-Type": "text/html"}, f"<html>bad gateway for {self.headers.get('Authorization')}</html>"

    def route_reject(self, query, body, call):
        return 404, {}, {"error": f"no such index; you sent {self.headers.get('Authorization')}"}

    def route_wrong_shape(self, query, body, call):
        return 200, {}, {"results": {"hits": ["d1"]}}

    def route_no_id(self, query, body, call):
        return 200, {}, {"results": [{"doc": {"title": "fan blades"}}]}

    def route_trickle(self, query, body, call):
        """A valid answer sent one byte every 0.1 s: all of it (`part=all`) or only the body (`part=body`)."""
        payload = json.dumps({"results": ["d1", "d2", "d3"]}).encode()
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n".encode()
        slow = head + payload if query["part"] == "all" else payload
        if query["part"] == "body":
            self.wfile.write(head)
        try:
            for byte in slow:
                self.wfile.write(bytes([byte]))
                time.sleep(0.1)
        except OSError:  # the client gave up, as it should
            pass
        self.close_connection = True

    def route_pieces(self, query, body, call):
        """A valid answer of about 20 KB written in pieces, each after `pause` s: cut at the end of the
        headers and around the client's 8 KiB read buffer (`cuts`, offsets into the body)."""
        payload = json.dumps({"results": overlap_ranking(body.get("query", "")), "padding": "x" * 20_000}).encode()
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n".encode()
        message = head + payload
        ends = [len(head) + int(cut) for cut in query["cuts"].split(",")] + [len(message)]
        start = 0
        for end in ends:
            time.sleep(float(query["pause"]))
            self.wfile.write(message[start:end])
            start = end

    def route_version(self, query, body, call):
        return 200, {}, {"index": {"version": "2024-06-01T02:00"}}


AUTH = {"Authorization": {"env": TOKEN_VAR, "prefix": "Bearer "}}


def build(url: str, identifier: str = "search", **params) -> HttpRetriever:
    fast = {"timeout_seconds": 2, "retries": 2, "backoff_seconds": 0.01}
    return HttpKind.parse(identifier, {"url": url, **fast, **params}, BuildContext(Path("."), "test.yaml")).build()


def golden_set(*texts: str) -> GoldenQuestionSet:
    questions = [
        GoldenQuestion(id=f"q{n}", question=text, form="match", expected_document_ids=("d1",))
        for n, text in enumerate(texts, start=1)
    ]
    return GoldenQuestionSet(identifier="http.test", name="HTTP test", questions=questions)
