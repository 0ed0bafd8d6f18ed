"""The HTTP retriever's limits: header values it can send, a total timeout per request, and fail-fast
when the service cannot be reached, against real servers (and a closed port) on 127.0.0.1."""

from __future__ import annotations

import queue
import socket
import threading

import pytest
from http_service import AUTH, SECRET, TOKEN_VAR, build, golden_set

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.retriever import RetrieverFault, ServiceUnreachable
from retrieval_pipeline.core.scoring.failures import NOT_ASKED
from retrieval_pipeline.core.services.evaluation.runner import run_question_set


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("part", ["body", "all"], ids=["trickled-body", "trickled-headers-and-body"])
def test_timeout_caps_the_whole_request_however_slowly_the_server_trickles(service, part):
    """Each byte arrives well within the timeout; only a deadline on the whole request stops it."""
    retriever = build(service.url(f"/trickle?part={part}"), timeout_seconds=0.5, retries=0)

    total = r"timed out: no complete answer within timeout_seconds=0\.5 \(connect, headers and body\)"
    with pytest.raises(RetrieverFault, match=total):
        retriever.retrieve("anything", 12)


@pytest.mark.slow
def test_an_answer_arriving_in_pieces_within_the_timeout_is_read_whole_across_keep_alive_requests(service):
    """Each read returns part of the answer while time remains; none may pass for the end of it."""
    pieces = "/pieces?cuts=0,1,8191,8192,8193,16384&pause=0.02"
    retriever = build(service.url(pieces), timeout_seconds=2, retries=0, concurrency=1)

    assert [retriever.retrieve("glaciers ice", 12) for _ in range(3)] == [["d3"]] * 3
    assert service.connections == 1


HANGING_HOST = "search.hanging-resolver.test"


@pytest.fixture
def hanging_resolver(monkeypatch):
    """`socket.getaddrinfo`, through which urllib3 and the retriever both resolve, hanging on one host
    name as a resolver does when its name server drops queries; released when the test ends. Yields the
    names it was asked for, in the order asked (from whichever thread asked)."""
    release = threading.Event()
    asked: queue.SimpleQueue[str] = queue.SimpleQueue()
    resolve = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        if host != HANGING_HOST:
            return resolve(host, *args, **kwargs)
        asked.put(host)
        release.wait(10)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield asked
    release.set()


def test_a_name_lookup_that_hangs_counts_against_the_timeout_and_the_service_is_unreachable(hanging_resolver, token, caplog):
    url = f"http://{HANGING_HOST}/search"

    retriever = build(url, timeout_seconds=0.2, retries=1, headers=AUTH)
    with pytest.raises(ServiceUnreachable) as raised:
        retriever.retrieve("anything", 12)

    assert str(raised.value) == f"host name not resolved within the timeout (POST {url}, 2 attempts)"
    assert retriever.retries() == {f"POST {url}: host name not resolved within the timeout": 1}
    assert retriever.retries() == {}  # counted once: each run reports its own
    assert [hanging_resolver.get(timeout=10) for _ in range(2)] == [HANGING_HOST] * 2  # once per attempt
    assert hanging_resolver.empty()


@pytest.mark.slow
def test_a_host_name_is_looked_up_before_connecting(service):
    """`localhost` comes from the hosts file: a real lookup that needs no name server."""
    url = service.url("/ids").replace("127.0.0.1", "localhost")

    assert build(url, timeout_seconds=2).retrieve("glaciers ice", 12) == ["d3"]


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
