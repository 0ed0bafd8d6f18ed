"""The HTTP retriever's parameters, and its headers checked before any request is made.

Header values are checked when the retriever is built: a value with a line break or another control
character would make the HTTP client fail on every question with an error quoting the whole header,
secret included. A secret read from a file usually ends with one newline, so a single trailing line
ending of an environment value is dropped; anything else is refused with a message naming the
variable, never the value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from retrieval_pipeline.core.base import secrets
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.retriever import RetrieverParams

URL_PATTERN = r"^https?://"


class EnvHeader(BaseModel):
    """A header value taken from an environment variable at build time, e.g. a bearer token."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    env: str = Field(min_length=1)
    prefix: str = ""


class HttpTransportParams(RetrieverParams):
    """How any JSON service is asked: where, with which headers, how long, how often; shared by every
    adapter that asks one (`http_client.JsonService`)."""

    url: str = Field(pattern=URL_PATTERN)
    extra_body: dict[str, Any] | None = None
    extra_params: dict[str, Any] | None = None
    headers: dict[str, str | EnvHeader] = {}
    timeout_seconds: float = Field(10.0, gt=0, description="caps each attempt whole: name lookup, connect, headers and body")
    retries: int = Field(3, ge=0)
    backoff_seconds: float = Field(0.2, ge=0)
    concurrency: int = Field(4, ge=1)
    fail_fast_after: int = Field(10, ge=0, description="stop when this many first questions cannot connect; 0: never")

    @field_validator("headers", mode="before")
    @classmethod
    def _header_values(cls, headers: Any) -> Any:
        """One sentence naming the header beats pydantic's report on each member of the union."""
        for name, value in headers.items() if isinstance(headers, dict) else ():
            if not (isinstance(value, str) or (isinstance(value, dict) and {"env"} <= value.keys() <= {"env", "prefix"})):
                raise ValueError(f"header {name!r} must be a plain string or {{env: VARIABLE_NAME, prefix: optional text}}")
        return headers


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


def resolved_headers(params: HttpTransportParams, invalid: Callable[[str, str], InvalidInputError]) -> dict[str, str]:
    """Header name to the value sent; environment values are remembered as secrets to scrub."""
    headers: dict[str, str] = {}
    for name, value in params.headers.items():
        field = f"headers.{name}"
        if isinstance(value, str):
            _check(value, f"the value of header {name!r}", field, invalid)
            headers[name] = value
            continue
        _check(value.prefix, f"the prefix of header {name!r}", field, invalid)
        secret = secrets.from_environment(value.env)
        if secret is None:
            raise invalid(f"the environment variable {value.env} is not set or empty", field)
        secret = secret.removesuffix("\n").removesuffix("\r")
        _check(secret, f"the environment variable {value.env}", field, invalid)
        headers[name] = value.prefix + secret
    return headers


def _check(text: str, what: str, field: str, invalid: Callable[[str, str], InvalidInputError]) -> None:
    """Never quotes the text: it may be a secret."""
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text):
        raise invalid(
            f"{what} holds a line break or another control character, which an HTTP header cannot carry "
            "(only one trailing newline of an environment value is dropped)",
            field,
        )
    if any(ord(c) > 0xFF for c in text):
        raise invalid(f"{what} holds a character outside Latin-1, which an HTTP header cannot carry", field)
