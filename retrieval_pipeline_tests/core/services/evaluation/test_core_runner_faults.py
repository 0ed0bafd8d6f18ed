"""Retriever faults: retried, then recorded on the question; the run is incomplete and never a baseline."""

from __future__ import annotations

import pytest
from core_helpers import question, question_set

from retrieval_pipeline.core.base import secrets
from retrieval_pipeline.core.retrieval.retriever import RetrieverFault
from retrieval_pipeline.core.scoring.failures import DEFAULT_FAIL_FAST_AFTER, failure_summary
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy, run_question_set
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

NO_WAIT = RetryPolicy(attempts=3, backoff_seconds=0)
RECORD_NO_WAIT = EvaluationSettings(retry=NO_WAIT)
QS = question_set(
    question("q1", text="first question"),
    question("q2", text="second question"),
    question("q3", text="third question"),
)


class FlakyRetriever:
    """Fails the first `failures` attempts on one question text, then answers; counts every attempt."""

    def __init__(self, failing_text: str | None = None, failures: int = 0, identifier: str = "flaky"):
        self.identifier = identifier
        self.failing_text = failing_text
        self.failures = failures
        self.attempts: dict[str, int] = {}

    def retrieve(self, question, limit):
        self.attempts[question] = self.attempts.get(question, 0) + 1
        if question == self.failing_text and self.attempts[question] <= self.failures:
            raise ConnectionError("search service unavailable")
        return ["t"]


class ReturnsRetriever:
    identifier = "odd"

    def __init__(self, value):
        self.value = value
        self.calls = 0

    def retrieve(self, question, limit):
        self.calls += 1
        return self.value


def test_a_failing_question_is_retried_then_recorded_with_its_error():
    retriever = FlakyRetriever("second question", failures=99)
    run = run_question_set(QS, retriever, retry=NO_WAIT)
    assert retriever.attempts == {"first question": 1, "second question": 3, "third question": 1}
    errored = run.questions[1]
    assert "ConnectionError" in errored.error and "search service unavailable" in errored.error
    assert "3 attempts" in errored.error
    assert run.complete is False
    assert run.errored_question_ids == ("q2",)


def test_an_errored_question_is_neither_hit_nor_miss():
    run = run_question_set(QS, FlakyRetriever("second question", failures=99), retry=NO_WAIT)
    errored = run.questions[1]
    assert errored.hit_at(1) is None and errored.hit_at(3) is None
    assert errored.retrieved_document_ids == ()
    assert [q.hit_at(1) for q in run.questions] == [True, None, True]
    assert run.hit_count(1) == 2


def test_a_retriever_that_recovers_on_the_second_attempt_gives_a_complete_run():
    retriever = FlakyRetriever("second question", failures=1)
    run = run_question_set(QS, retriever, retry=NO_WAIT)
    assert retriever.attempts["second question"] == 2
    assert run.complete is True
    assert run.hit_rate(1) == 1.0
    assert all(q.error is None for q in run.questions)


def test_a_single_attempt_policy_does_not_retry():
    retriever = FlakyRetriever("first question", failures=1)
    run = run_question_set(QS, retriever, retry=RetryPolicy(attempts=1, backoff_seconds=0))
    assert retriever.attempts["first question"] == 1
    assert run.errored_question_ids == ("q1",)


def test_retries_wait_with_growing_backoff(monkeypatch):
    waits = []
    monkeypatch.setattr("retrieval_pipeline.core.services.evaluation.asking.time.sleep", waits.append)
    run_question_set(
        QS, FlakyRetriever("first question", failures=99), retry=RetryPolicy(attempts=4, backoff_seconds=0.5, factor=2)
    )
    assert waits == [0.5, 1.0, 2.0]


@pytest.mark.parametrize("policy", [{"attempts": 0}, {"backoff_seconds": -1}, {"factor": 0.5}])
def test_a_nonsensical_retry_policy_is_refused(policy):
    with pytest.raises(ValueError):
        RetryPolicy(**policy)


@pytest.mark.parametrize(
    ("returned", "described"),
    [
        ("doc-1 doc-2", "returned str 'doc-1 doc-2'"),
        (None, "returned NoneType None"),
        (["doc-1", 7], "holding int 7"),
        ({"doc-1": 0.9}, "returned dict"),
        (b"doc-1", "returned bytes"),
        (42, "returned int 42"),
    ],
    ids=["str", "None", "list-with-int", "dict", "bytes", "int"],
)
def test_a_retriever_returning_something_other_than_document_ids_is_a_fault_saying_what_it_returned(returned, described):
    retriever = ReturnsRetriever(returned)
    run = run_question_set(question_set(question("q1")), retriever, retry=NO_WAIT)
    result = run.questions[0]
    assert described in result.error
    assert result.hit_at(1) is None
    assert run.complete is False
    assert retriever.calls == 1  # a malformed answer is not retried: asking again will not fix it


def test_a_tuple_of_ids_is_a_valid_ranking():
    run = run_question_set(question_set(question("q1")), ReturnsRetriever(("a", "t")), retry=NO_WAIT)
    assert run.complete and run.questions[0].hit_at(3) is True


class BatchRetriever:
    """Offers a batch call; the batch fails (or misbehaves) so the runner must fall back per question."""

    identifier = "batchy"

    def __init__(self, batch_behaviour):
        self.batch_behaviour = batch_behaviour
        self.batch_calls = 0
        self.single_calls = []

    def retrieve_batch(self, questions, limit):
        self.batch_calls += 1
        return self.batch_behaviour(questions, limit)

    def retrieve(self, question, limit):
        self.single_calls.append((question, limit))
        return ["t"]


def failing_batch(questions, limit):
    raise TimeoutError("batch endpoint timed out")


@pytest.mark.parametrize(
    "behaviour",
    [failing_batch, lambda qs, limit: [["t"]], lambda qs, limit: [["t"], "t", ["t"]]],
    ids=["raises", "too-few-rankings", "malformed-ranking"],
)
def test_a_batch_retriever_whose_batch_call_fails_falls_back_to_asking_per_question(behaviour):
    retriever = BatchRetriever(behaviour)
    run = run_question_set(QS, retriever, retry=NO_WAIT)
    assert retriever.batch_calls == 1
    assert retriever.single_calls == [(q.question, 12) for q in QS.questions]
    assert run.complete is True
    assert run.hit_rate(1) == 1.0


def test_a_working_batch_call_answers_every_question_at_once():
    retriever = BatchRetriever(lambda qs, limit: [["a", "t"] for _ in qs])
    run = run_question_set(QS, retriever, retry=NO_WAIT)
    assert retriever.batch_calls == 1 and retriever.single_calls == []
    assert (run.hit_rate(1), run.hit_rate(3)) == (0.0, 1.0)


def test_a_concurrent_retriever_answers_every_question_in_set_order():
    class Remote:
        identifier = "remote"
        concurrency = 4

        def retrieve(self, question, limit):
            return [question]

    many = question_set(*(question(f"q{i}", (f"question q{i}?",)) for i in range(40)))
    run = run_question_set(many, Remote(), retry=NO_WAIT)
    assert [q.question_id for q in run.questions] == [f"q{i}" for i in range(40)]
    assert run.hit_rate(1) == 1.0


def test_progress_reports_every_question():
    seen = []
    run_question_set(QS, FlakyRetriever(), retry=NO_WAIT, progress=seen.append)
    assert sum(seen) == 3


def test_index_version_is_recorded_when_the_retriever_reports_it():
    class Versioned(FlakyRetriever):
        def index_version(self):
            return "index-2024-06-01"

    assert run_question_set(QS, Versioned(), retry=NO_WAIT).index_version == "index-2024-06-01"
    assert run_question_set(QS, FlakyRetriever(), retry=NO_WAIT).index_version is None


def test_a_failing_index_version_report_does_not_stop_the_measurement():
    class BrokenVersion(FlakyRetriever):
        def index_version(self):
            raise ConnectionError("version endpoint down")

    run = run_question_set(QS, BrokenVersion(), retry=NO_WAIT)
    assert run.complete and run.index_version is None
    assert run.hit_rate(1) == 1.0


# --- through evaluate_and_record --------------------------------------------------------------


def test_an_incomplete_run_is_stored_but_not_compared_and_not_a_regression(tmp_path):
    store = ResultStore(str(tmp_path / "store"))
    first = evaluate_and_record(QS, FlakyRetriever(), store, RECORD_NO_WAIT)
    assert first.stored.complete is True
    broken = evaluate_and_record(QS, FlakyRetriever("third question", failures=99), store, RECORD_NO_WAIT)
    assert broken.run.complete is False
    assert broken.stored.complete is False
    assert broken.report.is_regression is False
    assert "Incomplete run" in broken.report.summary
    assert broken.report.baseline_run_id == first.run.run_id
    history = store.history(HistoryKey(QS.identifier, "flaky"))
    assert [run.run_id for run in history] == [broken.run.run_id, first.run.run_id]
    assert store.load(history[0]).questions[2].error is not None


def test_a_later_run_compares_with_the_earlier_complete_run_not_the_incomplete_one(tmp_path):
    store = ResultStore(str(tmp_path / "store"))
    first = evaluate_and_record(QS, FlakyRetriever(), store, RECORD_NO_WAIT)
    evaluate_and_record(QS, FlakyRetriever("first question", failures=99), store, RECORD_NO_WAIT)
    later = evaluate_and_record(QS, FlakyRetriever(), store, RECORD_NO_WAIT)
    assert later.baseline.run_id == first.run.run_id
    assert later.report.baseline_run_id == first.run.run_id
    assert store.baseline(HistoryKey(QS.identifier, "flaky")).run_id == later.run.run_id


def test_an_incomplete_first_run_leaves_no_baseline(tmp_path):
    store = ResultStore(str(tmp_path / "store"))
    evaluate_and_record(QS, FlakyRetriever("first question", failures=99), store, RECORD_NO_WAIT)
    assert store.baseline(HistoryKey(QS.identifier, "flaky")) is None
    follow_up = evaluate_and_record(QS, FlakyRetriever(), store, RECORD_NO_WAIT)
    assert follow_up.report.has_baseline is False
    assert "recorded as the baseline" in follow_up.report.summary


# --- secrets and fail-fast --------------------------------------------------------------------


class QuotingRetriever:
    """Fails every question with an error of the given type quoting a secret, as careless clients do."""

    identifier = "quoting"

    def __init__(self, error_type, secret):
        self.error_type = error_type
        self.secret = secret

    def retrieve(self, question, limit):
        raise self.error_type(f"Invalid header value {('Bearer ' + self.secret).encode()!r}")


@pytest.mark.parametrize("error_type", [ValueError, RetrieverFault, KeyError], ids=["ValueError", "RetrieverFault", "KeyError"])
def test_a_remembered_secret_is_scrubbed_from_every_recorded_error_whatever_the_exception(tmp_path, error_type):
    secret = "tok-runner-0b6c2f8e1d\n"
    secrets.remember(secret)
    store = ResultStore(str(tmp_path / "store"))

    evaluation = evaluate_and_record(QS, QuotingRetriever(error_type, secret), store, RECORD_NO_WAIT)

    stored = store.load(store.history(HistoryKey(QS.identifier, "quoting"))[0])
    texts = [q.error for q in (*evaluation.run.questions, *stored.questions)] + [evaluation.report.summary]
    assert all("***" in text for text in texts)
    files = b"".join(path.read_bytes() for path in (tmp_path / "store").rglob("*.parquet"))
    for form in (secret, secret.strip(), repr(secret)[1:-1]):
        assert not any(form in text for text in texts)
        assert form.encode() not in files


def test_an_error_quoting_a_secret_leaves_scrubbed_errors_as_a_scrubbed_error_without_its_chain():
    secret = "tok-chain-77d0a1c3e9"
    secrets.remember(secret)

    with pytest.raises(secrets.SecretScrubbedError) as raised, secrets.scrubbed_errors():
        try:
            raise OSError(f"token {secret} refused")
        except OSError as error:
            raise RuntimeError("login failed") from error

    assert str(raised.value) == "RuntimeError: login failed"
    assert raised.value.__suppress_context__ and raised.value.__cause__ is None
    with pytest.raises(KeyError), secrets.scrubbed_errors():
        raise KeyError("nothing secret")


class DownRetriever(FlakyRetriever):
    """Every question fails to connect; `fail_fast_after` as the HTTP retriever offers it."""

    def __init__(self, fail_fast_after=None, answered_first=False):
        super().__init__(identifier="down")
        if fail_fast_after is not None:
            self.fail_fast_after = fail_fast_after
        self.answered_first = answered_first

    def retrieve(self, question, limit):
        self.attempts[question] = self.attempts.get(question, 0) + 1
        if self.answered_first and question == "question 0":
            return ["t"]
        raise ConnectionRefusedError("connection refused (http://127.0.0.1:9/search)")


MANY = question_set(*(question(f"q{n}", text=f"question {n}") for n in range(30)))


def test_a_run_whose_first_questions_cannot_connect_stops_and_says_why(tmp_path):
    retriever = DownRetriever()
    store = ResultStore(str(tmp_path / "store"))

    evaluation = evaluate_and_record(MANY, retriever, store, RECORD_NO_WAIT)

    assert len(retriever.attempts) == DEFAULT_FAIL_FAST_AFTER
    assert evaluation.stored.complete is False
    assert evaluation.report.summary.startswith(
        "Incomplete run: 10 of 30 questions failed (q0, q1, q2, q3, q4 and 5 more), 20 not asked: ConnectionRefusedError: "
        "connection refused (http://127.0.0.1:9/search) (after 3 attempts); the run stopped early: the first questions "
        "could not reach the service"
    )


@pytest.mark.parametrize(
    ("retriever", "asked"),
    [(DownRetriever(fail_fast_after=4), 4), (DownRetriever(fail_fast_after=0), 30), (DownRetriever(answered_first=True), 30)],
    ids=["retriever-says-4", "retriever-says-never", "service-answered-first"],
)
def test_how_many_questions_are_asked_before_the_run_stops(retriever, asked):
    run_question_set(MANY, retriever, retry=RetryPolicy(attempts=1, backoff_seconds=0))

    assert len(retriever.attempts) == asked


def test_an_incomplete_run_counts_each_cause_and_how_many_questions_it_hit():
    class Mixed(FlakyRetriever):
        def retrieve(self, question, limit):
            raise RetrieverFault("HTTP 500" if question == "first question" else "HTTP 503")

    run = run_question_set(QS, Mixed(), retry=NO_WAIT)

    assert failure_summary(run) == "3 of 3 questions failed; by cause: 2 × HTTP 503, 1 × HTTP 500"
    other = run_question_set(QS, FlakyRetriever("third question", failures=99), retry=NO_WAIT)
    assert failure_summary(other) == (
        "1 of 3 questions failed (q3): ConnectionError: search service unavailable (after 3 attempts)"
    )
