"""The HTTP retriever against a real HTTP server started in the test process on 127.0.0.1."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from http_service import AUTH, SECRET, TOKEN_VAR, build, golden_set

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.retriever import ConcurrentRetriever, RetrieverFault, VersionedIndex
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy, run_question_set


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_hits_that_are_plain_id_strings(service):
    assert build(service.url("/ids")).retrieve("glaciers ice", 12) == ["d3"]


@pytest.mark.slow
def test_missing_environment_variable_names_the_retriever_and_the_variable(service, monkeypatch):
    monkeypatch.delenv(TOKEN_VAR, raising=False)

    with pytest.raises(InvalidInputError, match=TOKEN_VAR) as raised:
        build(service.url("/search"), "remote_search", headers=AUTH)

    assert raised.value.key == "retrievers.remote_search"
    assert raised.value.field == "headers.Authorization"


@pytest.mark.slow
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
    run_question_set(golden_set("turbofan engines"), echoing[2])  # reports the retries of both its calls

    assert "non-JSON" in errors[0] and "bad gateway for Bearer ***" in errors[0]
    assert "HTTP 404" in errors[1] and "***" in errors[1]
    assert "after 3 attempts" in errors[2]
    assert all(question.error and "***" in question.error for question in result.questions)
    assert f"retriever {echoing[2].identifier}: 4 retries after POST {service.url('/flaky')}: HTTP 500" in caplog.text
    for text in (repr(retriever), str(retriever), *map(repr, echoing), *errors, repr(result), caplog.text):
        assert SECRET not in text
    assert "Authorization" in repr(retriever)


@pytest.mark.slow
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
    assert result.complete and result.hit_rate(1) == 1.0
    assert 1 < service.max_in_flight <= 4


@pytest.mark.slow
def test_connection_pool_bounds_in_flight_requests_for_any_number_of_callers(service, token):
    retriever = build(
        service.url("/search?delay=0.05"), headers=AUTH, results_path="data.results", id_field="doc.id", concurrency=2
    )

    with ThreadPoolExecutor(max_workers=8) as pool:
        rankings = list(pool.map(lambda n: retriever.retrieve(f"bees {n}", 3), range(16)))

    assert rankings == [["d4_0"]] * 16
    assert service.max_in_flight == 2


@pytest.mark.slow
def test_server_errors_are_retried_with_backoff_until_an_answer(service):
    started = time.perf_counter()

    ranking = build(service.url("/flaky?fail=2"), retries=3, backoff_seconds=0.05).retrieve("tidal turbines", 12)

    assert ranking == ["d5"]
    assert service.calls["/flaky"] == 3
    assert time.perf_counter() - started >= 0.05 + 0.1


@pytest.mark.slow
def test_persistent_server_errors_give_up_after_the_retries_and_the_runner_does_not_ask_again(service):
    retriever = build(service.url("/flaky?fail=1000"), retries=2)

    result = run_question_set(golden_set("tidal turbines"), retriever, retry=RetryPolicy(attempts=3, backoff_seconds=0))

    (question,) = result.questions
    assert "failed after 3 attempts" in question.error and "HTTP 500" in question.error and "overloaded" in question.error
    assert service.calls["/flaky"] == 3


@pytest.mark.slow
def test_timeouts_are_retried_then_reported(service):
    retriever = build(service.url("/slow"), timeout_seconds=0.1, retries=1)

    with pytest.raises(RetrieverFault, match="after 2 attempts.*(?i:timed out)"):
        retriever.retrieve("anything", 12)

    assert service.calls["/slow"] == 2


@pytest.mark.slow
def test_rate_limit_honours_a_small_retry_after(service):
    started = time.perf_counter()

    ranking = build(service.url("/busy?fail=1&after=0.3"), backoff_seconds=0.01).retrieve("sourdough flour", 12)

    assert ranking == ["d2"]
    assert service.calls["/busy"] == 2
    assert time.perf_counter() - started >= 0.3


@pytest.mark.slow
def test_rate_limit_with_a_long_retry_after_fails_at_once(service):
    with pytest.raises(RetrieverFault, match="rate limited for 3600 s"):
        build(service.url("/busy?fail=1&after=3600")).retrieve("sourdough flour", 12)

    assert service.calls["/busy"] == 1


@pytest.mark.slow
def test_client_errors_are_not_retried(service):
    with pytest.raises(RetrieverFault, match="HTTP 404.*no such index"):
        build(service.url("/reject"), retries=3).retrieve("anything", 12)

    assert service.calls["/reject"] == 1


@pytest.mark.slow
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


@pytest.mark.slow
def test_index_version_is_offered_only_when_configured(service):
    plain = build(service.url("/ids"))
    versioned = build(service.url("/ids"), version_url=service.url("/version"), version_path="index.version")

    result = run_question_set(golden_set("turbofan engines"), versioned)

    assert not isinstance(plain, VersionedIndex) and not hasattr(plain, "index_version")
    assert isinstance(versioned, VersionedIndex)
    assert versioned.index_version() == "2024-06-01T02:00"
    assert result.index_version == "2024-06-01T02:00"


@pytest.mark.slow
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
