"""The pgvector kind's parameters and its connection settings, checked without connecting.

The password is only ever read from the environment (`password: {env: VARIABLE}`): a `dsn` holding one
is refused, so no configuration file, log line or Dagster metadata can carry it; the value read is
remembered as a secret and scrubbed from every error text (core.secrets).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, field_validator

from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.retrievers.base.service import EnvSecret
from retrieval_pipeline.retrievers.vector.store import IDENTIFIER_PATTERN, StoreParams

# pgvector's operators; `<#>` is the negative inner product, so every one ranks ascending.
OPERATORS = {"cosine": "<=>", "inner_product": "<#>", "l2": "<->"}


class PgvectorParams(StoreParams):
    dsn: str | None = Field(None, description="a libpq connection string or URI, without a password")
    host: str | None = Field(None, min_length=1)
    port: int | None = Field(None, ge=1, le=65535)
    dbname: str | None = Field(None, min_length=1)
    user: str | None = Field(None, min_length=1)
    password: EnvSecret | None = None
    table: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$", description="table or schema.table")
    id_column: str = Field(pattern=IDENTIFIER_PATTERN)
    vector_column: str = Field(pattern=IDENTIFIER_PATTERN)
    distance: Literal["cosine", "inner_product", "l2"] = "cosine"
    where: str | None = Field(None, min_length=1, description="a fixed SQL filter, e.g. tenant = 'acme'")
    version_query: str | None = Field(None, min_length=1, description="SQL giving one row: the index version")

    @field_validator("table", "id_column", "vector_column", mode="before")
    @classmethod
    def _identifier(cls, value: Any) -> Any:
        """One sentence beats pydantic's pattern dump; quoted identifiers keep their case."""
        if isinstance(value, str) and not value.replace(".", "").replace("_", "").replace("$", "").isalnum():
            raise ValueError(f"{value!r} is not a plain SQL identifier (letters, digits, _ and $, table may be schema.table)")
        return value


def connection_settings(params: PgvectorParams, kind: KindContext) -> dict[str, Any]:
    """psycopg.connect's keyword arguments, read without connecting; a password only from the environment."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        given = conninfo_to_dict(params.dsn or "")
    except Exception:  # noqa: BLE001 - psycopg's parse error may quote the string, which may hold a password
        raise kind.invalid("dsn is not a libpq connection string or postgresql:// URI", "dsn") from None
    if given.pop("password", None):
        message = "dsn holds a password: give it as password: {env: VARIABLE} instead, so no file carries it"
        raise kind.invalid(message, "dsn")
    parts = params.model_dump(include={"host", "port", "dbname", "user"}, exclude_none=True)
    settings: dict[str, Any] = {**given, **parts}
    if params.password is not None:
        settings["password"] = params.password.value(kind, "password.env")
    settings["connect_timeout"] = max(1, math.ceil(params.timeout_seconds))  # libpq takes whole seconds
    settings["options"] = f"-c statement_timeout={math.ceil(params.timeout_seconds * 1000)}"
    return settings
