"""The HTTP retriever against a real HTTP server started in the test process on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from retrieval_pipeline.core.errors import InvalidInputError
from retrieval_pipeline.core.failures import NOT_ASKED
from retrieval_pipeline.core.questions import GoldenQuestion, GoldenQuestionSet
from retrieval_pipeline.core.retriever import BuildContext, ConcurrentRetriever, VersionedIndex
from retrieval_pipeline.core.retriever import RetrieverFault, ServiceUnreachable
from retrieval_pipeline.core.runner import RetryPolicy, run_question_set
from retrieval_pipeline.retrievers.http import HttpRetriever

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
    """Endpoints by path; counts calls per path and the most requests it ever served at once."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.requests: list[dict] = []

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def handle_error(self, request, client_address):
        """A client that gave up (timeout) breaks the pipe; that is the test's point, not a failure."""


class Handler(BaseHTTPRequestHandler):
    server: Service

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

    def route_version(self, query, body, call):
        return 200, {}, {"index": {"version": "2024-06-01T02:00"}}


@pytest.fixture
def service():
    server = Service()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def token(monkeypatch):
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    return SECRET


AUTH = {"Authorization": {"env": TOKEN_VAR, "prefix": "Bearer "}}


def build(url: str, identifier: str = "search", **params) -> HttpRetriever:
    fast = {"timeout_seconds": 2, "retries": 2, "backoff_seconds": 0.01}
    return HttpRetriever.from_config(identifier, {"url": url, **fast, **params}, BuildContext(Path("."), "test.yaml"))


def golden_set(*texts: str) -> GoldenQuestionSet:
    questions = [
        GoldenQuestion(id=f"q{n}", question=text, form="match", expected_document_ids=("d1",))
        for n, text in enumerate(texts, start=1)
    ]
    return GoldenQuestionSet(identifier="http.test", name="HTTP test", questions=questions)


def test_post_sends_question_limit_and_extra_body_and_reads_nested_ids(service, token):
    retriever = build(
        service.url("/search"),
        headers={**AUTH, "X-Client": "evaluation"},
        results_path="data.results",
        id_field="doc.id",
        chunk_separator="_",
        extra_body={"mode": "hybrid"},
        extra_params={"tenant": "acme"},
    )

    assert retriever.retrieve("turbofan fan blades water", 2) == ["d1", "d2"]
    (sent,) = service.requests
    assert sent["method"] == "POST"
    assert sent["body"] == {"mode": "hybrid", "query": "turbofan fan blades water", "limit": 2}
    assert sent["query"] == {"tenant": "acme"}


def test_get_sends_the_question_as_a_query_parameter_and_no_limit_when_limit_field_is_null(service, token):
    retriever = build(
        service.url("/search"),
        method="get",
        question_field="q",
        limit_field=None,
        extra_params={"delay": "0"},
        headers=AUTH,
        results_path="data.results",
        id_field="doc.id",
    )

    assert retriever.retrieve("bees flowers water", 1) == ["d4_0"]  # the service sent 3; the limit cuts
    (sent,) = service.requests
    assert sent["method"] == "GET" and sent["query"] == {"delay": "0", "q": "bees flowers water"}


def test_hits_that_are_plain_id_strings(service):
    assert build(service.url("/ids")).retrieve("glaciers ice", 12) == ["d3"]


def test_missing_environment_variable_names_the_retriever_and_the_variable(service, monkeypatch):
    monkeypatch.delenv(TOKEN_VAR, raising=False)

    with pytest.raises(InvalidInputError, match=TOKEN_VAR) as raised:
        build(service.url("/search"), "remote_search", headers=AUTH)

    assert raised.value.key == "retrievers.remote_search"
    assert raised.value.field == "headers.Authorization"


def test_secret_reaches_the_service_but_never_repr_errors_results_or_logs(service, token, caplog):
    caplog.set_level(logging.DEBUG)
    retriever = build(service.url("/search"), headers=AUTH, results_path="data.results", id_field="doc.id")
    echoing = [build(service.url(path), headers=AUTH) for path in ("/garbage", "/reject", "/flaky?fail=9")]

    assert retriever.retrieve("turbofan engines", 12) == ["d1_0"]  # a wrong token would be a 401
    errors = []
    for broken in echoing:
        with pytest.raises(RetrieverFault) as raised:
            broken.retrieve("turbofan engines", 12)
        errors.append(str(raised.value))
    result = run_question_set(golden_set("turbofan engines", "bees"), echoing[0])

    assert "non-JSON" in errors[0] and "bad gateway for Bearer ***" in errors[0]
    assert "HTTP 404" in errors[1] and "***" in errors[1]
    assert "after 3 attempts" in errors[2]
    assert all(question.error and "***" in question.error for question in result.questions)
    assert "retry 1 of 2" in caplog.text
    for text in (repr(retriever), str(retriever), *map(repr, echoing), *errors, repr(result), caplog.text):
        assert SECRET not in text
    assert "Authorization" in repr(retriever)


def test_runner_concurrency_is_bounded_by_the_retriever(service, token):
    retriever = build(
        service.url("/search?delay=0.05"),
        headers=AUTH,
        results_path="data.results",
        id_field="doc.id",
        chunk_separator="_",
        concurrency=4,
    )
    questions = golden_set(*(f"turbofan question {n}" for n in range(16)))

    result = run_question_set(questions, retriever)

    assert isinstance(retriever, ConcurrentRetriever) and retriever.concurrency == 4
    assert result.complete and result.top1_hit_rate == 1.0
    assert 1 < service.max_in_flight <= 4


def test_connection_pool_bounds_in_flight_requests_for_any_number_of_callers(service, token):
    retriever = build(service.url("/search?delay=0.05"), headers=AUTH, results_path="data.results", id_field="doc.id", concurrency=2)

    with ThreadPoolExecutor(max_workers=8) as pool:
        rankings = list(pool.map(lambda n: retriever.retrieve(f"bees {n}", 3), range(16)))

    assert rankings == [["d4_0"]] * 16
    assert service.max_in_flight == 2


def test_server_errors_are_retried_with_backoff_until_an_answer(service):
    started = time.perf_counter()

    ranking = build(service.url("/flaky?fail=2"), retries=3, backoff_seconds=0.05).retrieve("tidal turbines", 12)

    assert ranking == ["d5"]
    assert service.calls["/flaky"] == 3
    assert time.perf_counter() - started >= 0.05 + 0.1


def test_persistent_server_errors_give_up_after_the_retries_and_the_runner_does_not_ask_again(service):
    retriever = build(service.url("/flaky?fail=1000"), retries=2)

    result = run_question_set(golden_set("tidal turbines"), retriever, retry=RetryPolicy(attempts=3, backoff_seconds=0))

    (question,) = result.questions
    assert "failed after 3 attempts" in question.error and "HTTP 500" in question.error and "overloaded" in question.error
    assert service.calls["/flaky"] == 3


def test_timeouts_are_retried_then_reported(service):
    retriever = build(service.url("/slow"), timeout_seconds=0.1, retries=1)

    with pytest.raises(RetrieverFault, match="after 2 attempts.*(?i:timed out)"):
        retriever.retrieve("anything", 12)

    assert service.calls["/slow"] == 2


def test_rate_limit_honours_a_small_retry_after(service):
    started = time.perf_counter()

    ranking = build(service.url("/busy?fail=1&after=0.3"), backoff_seconds=0.01).retrieve("sourdough flour", 12)

    assert ranking == ["d2"]
    assert service.calls["/busy"] == 2
    assert time.perf_counter() - started >= 0.3


def test_rate_limit_with_a_long_retry_after_fails_at_once(service):
    with pytest.raises(RetrieverFault, match="rate limited for 3600 s"):
        build(service.url("/busy?fail=1&after=3600")).retrieve("sourdough flour", 12)

    assert service.calls["/busy"] == 1


def test_client_errors_are_not_retried(service):
    with pytest.raises(RetrieverFault, match="HTTP 404.*no such index"):
        build(service.url("/reject"), retries=3).retrieve("anything", 12)

    assert service.calls["/reject"] == 1


@pytest.mark.parametrize(
    ("path", "params", "message"),
    [
        ("/wrong-shape", {}, r"no list at 'results': '\{\"results\": \{\"hits\": \[\"d1\"\]\}\}'"),
        ("/ids", {"results_path": "data.results"}, r"no list at 'data.results': '\{\"results\": \[\]\}'"),
        ("/no-id", {"id_field": "doc.id"}, r"hit 1 is not an id at 'doc.id': '\{\"doc\": \{\"title\": \"fan blades\"\}\}'"),
        ("/no-id", {}, r"hit 1 is not a document-id string"),
    ],
)
def test_unexpected_json_says_what_came_back(service, path, params, message):
    with pytest.raises(RetrieverFault, match=message):
        build(service.url(path), **params).retrieve("nothing matches", 12)

    assert service.calls[path] == 1


def test_index_version_is_offered_only_when_configured(service):
    plain = build(service.url("/ids"))
    versioned = build(service.url("/ids"), version_url=service.url("/version"), version_path="index.version")

    result = run_question_set(golden_set("turbofan engines"), versioned)

    assert not isinstance(plain, VersionedIndex) and not hasattr(plain, "index_version")
    assert isinstance(versioned, VersionedIndex)
    assert versioned.index_version() == "2024-06-01T02:00"
    assert result.index_version == "2024-06-01T02:00"


def test_index_version_missing_from_the_response_is_an_error(service):
    retriever = build(service.url("/ids"), version_url=service.url("/version"), version_path="index.built_at")

    with pytest.raises(RetrieverFault, match="no version at 'index.built_at'"):
        retriever.index_version()


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"method": "GET", "extra_body": {"a": 1}}, "extra_body", "GET request has no body"),
        ({"version_url": "http://127.0.0.1:1/version"}, "version_path", "go together"),
        ({"url": "ftp://example.org/search"}, "url", "should match"),
        ({"headers": {"Authorization": {"variable": "X"}}}, "headers", "'Authorization' must be a plain string or"),
        ({"retries": -1}, "retries", "greater than or equal to 0"),
    ],
)
def test_invalid_parameters_name_the_field(params, field, message):
    with pytest.raises(InvalidInputError, match=message) as raised:
        build(params.pop("url", "http://127.0.0.1:1/search"), "remote_search", **params)

    assert raised.value.key == "retrievers.remote_search"
    assert raised.value.field == field


@pytest.mark.parametrize("ending", ["\n", "\r\n"], ids=["newline", "crlf"])
def test_a_token_read_from_a_file_loses_its_one_trailing_line_ending(service, monkeypatch, ending):
    monkeypatch.setenv(TOKEN_VAR, SECRET + ending)

    retriever = build(service.url("/search"), headers=AUTH, results_path="data.results", id_field="doc.id")

    assert retriever.retrieve("turbofan engines", 12) == ["d1_0"]  # a 401 unless exactly "Bearer <token>"


@pytest.mark.parametrize(
    "value",
    [SECRET + "\r\nX-Injected: 1", SECRET + "\n\n", "tok\x1ben-" + SECRET, SECRET + "\t", SECRET + "\x7f", "tök€n-" + SECRET],
    ids=["embedded-crlf", "two-newlines", "escape", "tab", "del", "outside-latin-1"],
)
def test_a_header_secret_that_cannot_be_sent_is_refused_naming_the_variable_never_the_value(monkeypatch, value):
    monkeypatch.setenv(TOKEN_VAR, value)

    with pytest.raises(InvalidInputError, match=f"environment variable {TOKEN_VAR} holds") as raised:
        build("http://127.0.0.1:1/search", "remote_search", headers=AUTH)

    assert raised.value.field == "headers.Authorization"
    assert SECRET not in str(raised.value) and value.strip() not in str(raised.value)


def test_a_literal_header_value_with_a_line_break_is_refused_naming_the_header():
    with pytest.raises(InvalidInputError, match="the value of header 'X-Tenant' holds a line break") as raised:
        build("http://127.0.0.1:1/search", headers={"X-Tenant": "acme\r\nX-Injected: 1"})

    assert raised.value.field == "headers.X-Tenant"


@pytest.mark.parametrize("part", ["body", "all"], ids=["trickled-body", "trickled-headers-and-body"])
def test_timeout_caps_the_whole_request_however_slowly_the_server_trickles(service, part):
    """Each byte arrives well within the timeout; only a deadline on the whole request stops it."""
    retriever = build(service.url(f"/trickle?part={part}"), timeout_seconds=0.5, retries=0)

    with pytest.raises(RetrieverFault, match=r"timed out: no complete answer within timeout_seconds=0\.5 \(connect, headers and body\)"):
        retriever.retrieve("anything", 12)


def test_an_answer_within_the_timeout_is_read_whole_across_keep_alive_requests(service):
    retriever = build(service.url("/ids"), timeout_seconds=1, concurrency=1)

    assert [retriever.retrieve("glaciers ice", 12) for _ in range(3)] == [["d3"]] * 3


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_closed_port_is_an_unreachable_service_fault_naming_the_cause_and_url():
    url = f"http://127.0.0.1:{closed_port()}/search"

    with pytest.raises(ServiceUnreachable) as raised:
        build(url, retries=1).retrieve("anything", 12)

    assert str(raised.value) == f"connection refused (POST {url}, 2 attempts)"


@pytest.mark.parametrize(("fail_fast_after", "asked"), [(3, 3), (0, 8)], ids=["stops-after-3", "0-never-stops"])
def test_a_run_stops_when_its_first_questions_all_fail_to_connect(fail_fast_after, asked):
    url = f"http://127.0.0.1:{closed_port()}/search"
    retriever = build(url, retries=0, concurrency=1, fail_fast_after=fail_fast_after)

    result = run_question_set(golden_set(*(f"question {n}" for n in range(8))), retriever)

    errors = [question.error for question in result.questions]
    assert errors[:asked] == [f"connection refused (POST {url}, 1 attempt)"] * asked
    assert errors[asked:] == [f"{NOT_ASKED}connection refused (POST {url}, 1 attempt)"] * (8 - asked)
    assert not result.complete

