"""The HTTP retriever's parameters, and its headers checked before any request is made.

Header values are checked when the retriever is built: a value with a line break or another control
character would make the HTTP client fail on every question with an error quoting the whole header,
secret included: it is refused with a message naming the variable, never the value.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from retrieval_pipeline.core.retrieval.kinds import KindContext, KindParams
from retrieval_pipeline.retrievers.base.service import EnvSecret, ServiceParams

URL_PATTERN = r"^https?://"


class EnvHeader(EnvSecret):
    """A header value taken from an environment variable at build time, after an optional plain `prefix`
    (`Bearer `)."""

    prefix: str = ""


class HttpEndpoint(KindParams):
    """Where a JSON service is and what goes with every request."""

    url: str = Field(pattern=URL_PATTERN)
    extra_body: dict[str, Any] | None = None
    extra_params: dict[str, Any] | None = None
    headers: dict[str, str | EnvHeader] = {}

    @field_validator("headers", mode="before")
    @classmethod
    def _header_values(cls, headers: Any) -> Any:
        """One sentence naming the header beats pydantic's report on each member of the union."""
        for name, value in headers.items() if isinstance(headers, dict) else ():
            if not (isinstance(value, str) or (isinstance(value, dict) and {"env"} <= value.keys() <= {"env", "prefix"})):
                raise ValueError(f"header {name!r} must be a plain string or {{env: VARIABLE_NAME, prefix: optional text}}")
        return headers


class HttpTransportParams(ServiceParams, HttpEndpoint):
    """How any JSON service is asked: the endpoint, then the service settings and the retries; shared by
    every adapter that asks one (`http.client.JsonService`). The bases' order keeps the endpoint's keys
    first, so a configuration wrong in two places is told about the same one as before."""

    retries: int = Field(3, ge=0)
    backoff_seconds: float = Field(0.2, ge=0)


class HttpParams(HttpTransportParams):
    method: Literal["GET", "POST"] = "POST"
    question_field: str = Field("query", min_length=1)
    limit_field: str | None = Field("limit", min_length=1)
    results_path: str = Field("results", description="dotted path to the list of hits; empty: the response itself")
    id_field: str | None = Field(None, min_length=1, description="dotted path to the id in a hit; null: hits are ids")
    chunk_separator: str | None = Field(None, min_length=1)
    version_url: str | None = Field(None, pattern=URL_PATTERN)
    version_path: str | None = Field(None, min_length=1)

    @field_validator("method", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value


def resolved_headers(params: HttpTransportParams, kind: KindContext) -> dict[str, str]:
    """Header name to the value sent; environment values are remembered as secrets to scrub."""
    headers: dict[str, str] = {}
    for name, value in params.headers.items():
        field = f"headers.{name}"
        if isinstance(value, str):
            _check(value, f"the value of header {name!r}", field, kind)
            headers[name] = value
            continue
        _check(value.prefix, f"the prefix of header {name!r}", field, kind)
        secret = value.value(kind, field)
        _check(secret, f"the environment variable {value.env}", field, kind)
        headers[name] = value.prefix + secret
    return headers


def _check(text: str, what: str, field: str, kind: KindContext) -> None:
    """Never quotes the text: it may be a secret."""
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text):
        raise kind.invalid(
            f"{what} holds a line break or another control character, which an HTTP header cannot carry "
            "(only one trailing newline of an environment value is dropped)",
            field,
        )
    if any(ord(c) > 0xFF for c in text):
        raise kind.invalid(f"{what} holds a character outside Latin-1, which an HTTP header cannot carry", field)
