"""One JSON service asked over HTTP with the HTTP kind's rules, for every adapter that talks to one.

Retries live here, not only in the core runner, because only the adapter knows which failures are
transient; every error raised is a `RetrieverFault`, so the runner records it instead of asking again and
multiplying the load on a struggling service. A service that could not be reached at all raises
`HttpServiceUnreachable`, which the runner's fail-fast counts. Secret header values are scrubbed from
every message raised or logged here (`core.secrets`), since a service may echo its request.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Mapping
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from retrieval_pipeline.core.base.backoff import Transient, with_backoff
from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.core.base.text_files import JSON_ERRORS, json_problem
from retrieval_pipeline.core.retrieval.retriever import ANSWER_MARK, RetrieverFault, ServiceUnreachable
from retrieval_pipeline.retrievers.http.params import HttpTransportParams

MAX_RETRY_AFTER_SECONDS = 30.0
PREVIEW_CHARS = 200


class HttpRetrieverError(RetrieverFault):
    """Final: transient failures were already retried, the rest cannot be fixed by asking again."""


class HttpServiceUnreachable(HttpRetrieverError, ServiceUnreachable):
    """Every attempt failed before a connection was made: the runner may stop the run early."""


class JsonService:
    """A pool of `concurrency` connections to one service, each request under one whole deadline."""

    def __init__(self, identifier: str, params: HttpTransportParams, headers: Mapping[str, str]):
        from retrieval_pipeline.retrievers.http.transport import deadline_pool_manager

        self.identifier = identifier
        self._params = params
        self._retries: Counter[str] = Counter()
        self._lock = threading.Lock()
        # A blocking pool of `concurrency` connections bounds in-flight requests whoever calls it.
        # urllib3 directly rather than requests on top of it: far less CPU per request, which is
        # what keeps a concurrent evaluation near N x latency / concurrency.
        self._pool = deadline_pool_manager(
            params.timeout_seconds,
            maxsize=params.concurrency,
            block=True,
            retries=False,
            headers={"Accept": "application/json", **headers},
        )

    def request_json(self, method: str, url: str, query: Mapping[str, Any] | None = None, body: Any = None) -> Any:
        """Transient failures are retried with exponential backoff; anything else fails at once."""
        from urllib.parse import urlencode

        target = f"{url}{'&' if '?' in url else '?'}{urlencode(query, doseq=True)}" if query else url
        endpoint = url.split("?", 1)[0]  # errors and retries name it without a query, which may hold a key
        retried: list[Transient] = []

        def count(failure: Transient) -> None:
            retried.append(failure)
            self._count_retry(f"{method} {endpoint}: {scrub(failure.cause).split(ANSWER_MARK, 1)[0]}")

        attempts = self._params.retries + 1
        try:
            return with_backoff(
                lambda: self._attempt(method, target, endpoint, body), attempts, self._params.backoff_seconds, on_retry=count
            )
        except Transient as last:
            tried = f"{attempts} attempt{'s' if attempts > 1 else ''}"
            if all(failure.unreachable for failure in (*retried, last)):  # the same words for every question, so failures group
                raise self.fault(f"{last.cause} ({method} {endpoint}, {tried})", unreachable=True) from None
            raise self.fault(f"{method} {endpoint} failed after {tried}; last: {last.cause}") from None

    def _attempt(self, method: str, target: str, endpoint: str, body: Any) -> Any:
        """One request's JSON answer; `Transient` when asking again may get one."""
        import urllib3

        from retrieval_pipeline.retrievers.http.transport import deadline_after, unreachable_reason

        try:
            with deadline_after(self._params.timeout_seconds) as deadline:
                response = self._pool.request(method, target, json=body)
        except urllib3.exceptions.HTTPError as error:  # connection refused or reset, timeouts, broken reads
            reason = unreachable_reason(error)
            if reason is None and time.monotonic() >= deadline:
                limit = self._params.timeout_seconds
                raise Transient(
                    f"timed out: no complete answer within timeout_seconds={limit:g} (connect, headers and body)"
                ) from None
            raise Transient(reason or f"{type(error).__name__}: {error}", unreachable=reason is not None) from None
        status = response.status
        text = response.data.decode("utf-8", "replace")
        if status < 400:
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                raise self.fault(
                    f"{method} {endpoint} answered HTTP {status} with non-JSON{ANSWER_MARK}{self.preview(text)}"
                ) from None
            except JSON_ERRORS as error:  # nested thousands deep, a number of thousands of digits
                raise self.fault(
                    f"{method} {endpoint} answered HTTP {status} with JSON that cannot be read: "
                    f"{json_problem(error)}{ANSWER_MARK}{self.preview(text[:PREVIEW_CHARS])}"
                ) from None
        problem = f"HTTP {status}{ANSWER_MARK}{self.preview(text)}"
        if status != 429 and status < 500:
            raise self.fault(f"{method} {endpoint} answered {problem}")
        retry_after = _retry_after_seconds(response.headers.get("Retry-After")) if status == 429 else None
        if retry_after is not None and retry_after > MAX_RETRY_AFTER_SECONDS:
            raise self.fault(f"{method} {endpoint} is rate limited for {retry_after:.0f} s (Retry-After); {problem}")
        raise Transient(problem, at_least=retry_after or 0.0)

    def _count_retry(self, cause: str) -> None:
        with self._lock:
            self._retries[cause] += 1

    def retries(self) -> dict[str, int]:
        """The retries since the last call, by cause: what `CountsRetries` asks of the adapter."""
        with self._lock:
            counted, self._retries = dict(self._retries), Counter()
        return counted

    def fault(self, message: str, unreachable: bool = False) -> HttpRetrieverError:
        return (HttpServiceUnreachable if unreachable else HttpRetrieverError)(scrub(message))

    def preview(self, value: Any) -> str:
        """What came back, secrets scrubbed before truncation so no fragment of one survives the cut."""
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
        text = scrub(text)
        return repr(text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 3] + "...")


def _retry_after_seconds(header: str | None) -> float | None:
    """Retry-After is seconds or an HTTP date; anything unreadable is ignored in favour of the backoff."""
    if header is None:
        return None
    try:
        return max(0.0, float(header))
    except ValueError:
        pass
    try:
        moment = parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return max(0.0, (moment - datetime.now(timezone.utc)).total_seconds())


MISSING = object()


def at_path(document: Any, dotted_path: str) -> Any:
    """Follow a dotted path through nested objects (empty: the document itself); `MISSING` when it leads nowhere."""
    value = document
    for part in dotted_path.split(".") if dotted_path else ():
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value
