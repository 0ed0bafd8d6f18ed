"""Ask a JSON search service over HTTP, so a deployed search stack is measured exactly as users reach it.

Configuration says where the question goes and where the hits and their ids sit in the response, so
most services need no code. Retries live here, not only in the core runner, because only this adapter
knows which failures are transient; every error it raises is a `RetrieverFault`, so the runner records
it instead of asking again and multiplying the load on a struggling service. Secret header values are
scrubbed from every message raised or logged here (`core.secrets`), since a service may echo its request.
`index_version` exists only on `VersionedHttpRetriever` (when `version_url` is set): the core's runtime
protocol only checks that the method exists, so every instance having it would claim the capability.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.core.retrieval.retriever import BuildContext, RetrieverFault, ServiceUnreachable, document_id_from_chunk
from retrieval_pipeline.retrievers.http_params import HttpParams, resolved_headers

logger = logging.getLogger(__name__)

MAX_RETRY_AFTER_SECONDS = 30.0
PREVIEW_CHARS = 200
_MISSING = object()


class HttpRetrieverError(RetrieverFault):
    """Final: transient failures were already retried, the rest cannot be fixed by asking again."""


class HttpServiceUnreachable(HttpRetrieverError, ServiceUnreachable):
    """Every attempt failed before a connection was made: the runner may stop the run early."""


class HttpRetriever:
    """One request per question; `concurrency` tells the runner how many questions to ask at once."""

    def __init__(self, identifier: str, params: HttpParams, headers: Mapping[str, str]):
        from retrieval_pipeline.retrievers.http_transport import deadline_pool_manager

        self.identifier = identifier
        self.concurrency = params.concurrency
        self.fail_fast_after = params.fail_fast_after
        self._params = params
        # A blocking pool of `concurrency` connections bounds in-flight requests whoever calls retrieve().
        # urllib3 directly rather than requests on top of it: far less CPU per request, which is
        # what keeps a concurrent evaluation near N x latency / concurrency.
        self._pool = deadline_pool_manager(
            params.timeout_seconds,
            maxsize=params.concurrency,
            block=True,
            retries=False,
            headers={"Accept": "application/json", **headers},
        )

    @classmethod
    def check_config(cls, identifier: str, params: Mapping[str, Any], context: BuildContext) -> HttpParams:
        parsed = HttpParams.parse(identifier, params, context)
        invalid = _invalid_input(identifier, context)
        if parsed.method == "GET" and parsed.extra_body is not None:
            raise invalid("a GET request has no body; use extra_params", "extra_body")
        if (parsed.version_url is None) != (parsed.version_path is None):
            raise invalid("version_url and version_path go together", "version_path")
        return parsed

    @classmethod
    def from_config(cls, identifier: str, params: Mapping[str, Any], context: BuildContext) -> HttpRetriever:
        parsed = cls.check_config(identifier, params, context)
        kind = VersionedHttpRetriever if parsed.version_url is not None else HttpRetriever
        return kind(identifier, parsed, resolved_headers(parsed, _invalid_input(identifier, context)))

    def __repr__(self) -> str:
        params, names = self._params, ", ".join(self._params.headers)
        return f"{type(self).__name__}({self.identifier!r}, {params.method} {params.url}, headers=[{names}])"

    def retrieve(self, question: str, limit: int) -> list[str]:
        params = self._params
        fields: dict[str, Any] = {params.question_field: question}
        if params.limit_field is not None:
            fields[params.limit_field] = limit
        if params.method == "GET":
            document = self._request_json("GET", params.url, query={**(params.extra_params or {}), **fields})
        else:
            body = {**(params.extra_body or {}), **fields}
            document = self._request_json("POST", params.url, query=params.extra_params, body=body)
        hits = _at(document, params.results_path)
        if not isinstance(hits, list):
            where = f"'{params.results_path}'" if params.results_path else "the top level"
            raise self._fault(f"the response has no list at {where}: {self._preview(document)}")
        ids = [self._hit_id(hit, position) for position, hit in enumerate(hits[:limit], start=1)]
        if params.chunk_separator is None:
            return ids
        return [document_id_from_chunk(chunk_id, params.chunk_separator) for chunk_id in ids]

    def _hit_id(self, hit: Any, position: int) -> str:
        value = hit if self._params.id_field is None else _at(hit, self._params.id_field)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        wanted = "a document-id string" if self._params.id_field is None else f"an id at '{self._params.id_field}'"
        raise self._fault(f"hit {position} is not {wanted}: {self._preview(hit)}")

    def _request_json(self, method: str, url: str, query: Mapping[str, Any] | None = None, body: Any = None) -> Any:
        """Transient failures are retried with exponential backoff; anything else fails at once."""
        from urllib.parse import urlencode

        import urllib3

        from retrieval_pipeline.retrievers.http_transport import deadline_after, unreachable_reason

        target = f"{url}{'&' if '?' in url else '?'}{urlencode(query, doseq=True)}" if query else url
        attempts = self._params.retries + 1
        wait = self._params.backoff_seconds
        unreachable = True
        for attempt in range(1, attempts + 1):
            delay = wait
            try:
                with deadline_after(self._params.timeout_seconds) as deadline:
                    response = self._pool.request(method, target, json=body)
            except urllib3.exceptions.HTTPError as error:  # connection refused or reset, timeouts, broken reads
                reason = unreachable_reason(error)
                unreachable = unreachable and reason is not None
                problem = reason or f"{type(error).__name__}: {error}"
                if reason is None and time.monotonic() >= deadline:
                    limit = self._params.timeout_seconds
                    problem = f"timed out: no complete answer within timeout_seconds={limit:g} (connect, headers and body)"
            else:
                unreachable = False
                status = response.status
                text = response.data.decode("utf-8", "replace")
                if status < 400:
                    try:
                        return json.loads(text)
                    except ValueError:
                        preview = self._preview(text)
                        raise self._fault(f"{method} {url} answered HTTP {status} with non-JSON: {preview}") from None
                problem = f"HTTP {status}: {self._preview(text)}"
                if status != 429 and status < 500:
                    raise self._fault(f"{method} {url} answered {problem}")
                retry_after = _retry_after_seconds(response.headers.get("Retry-After")) if status == 429 else None
                if retry_after is not None and retry_after > MAX_RETRY_AFTER_SECONDS:
                    raise self._fault(f"{method} {url} is rate limited for {retry_after:.0f} s (Retry-After); {problem}")
                delay = max(delay, retry_after or 0.0)
            tried = f"{attempts} attempt{'s' if attempts > 1 else ''}"
            if attempt == attempts and unreachable:  # the same words for every question, so failures group
                raise self._fault(f"{problem} ({method} {url}, {tried})", unreachable=True)
            if attempt == attempts:
                raise self._fault(f"{method} {url} failed after {tried}; last: {problem}")
            logger.warning(
                "retriever %s: %s %s failed (%s); retry %d of %d in %.2f s",
                self.identifier,
                method,
                url,
                scrub(problem),
                attempt,
                attempts - 1,
                delay,
            )
            time.sleep(delay)
            wait *= 2
        raise AssertionError("unreachable")

    def _fault(self, message: str, unreachable: bool = False) -> HttpRetrieverError:
        return (HttpServiceUnreachable if unreachable else HttpRetrieverError)(scrub(message))

    def _preview(self, value: Any) -> str:
        """What came back, secrets scrubbed before truncation so no fragment of one survives the cut."""
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
        text = scrub(text)
        return repr(text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 3] + "...")


class VersionedHttpRetriever(HttpRetriever):
    """An HTTP retriever whose service reports the version of the index it serves."""

    def index_version(self) -> str:
        params = self._params
        document = self._request_json("GET", params.version_url)
        version = _at(document, params.version_path)
        if isinstance(version, bool) or not isinstance(version, (str, int, float)) or version == "":
            raise self._fault(f"{params.version_url} has no version at '{params.version_path}': {self._preview(document)}")
        return str(version)


def _invalid_input(identifier: str, context: BuildContext) -> Callable[[str, str], InvalidInputError]:
    def invalid(message: str, field: str) -> InvalidInputError:
        return InvalidInputError(message, source=context.source, key=f"retrievers.{identifier}", field=field)

    return invalid


def _at(document: Any, dotted_path: str) -> Any:
    """Follow a dotted path through nested objects; `_MISSING` when it leads nowhere."""
    value = document
    for part in dotted_path.split(".") if dotted_path else ():
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


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
