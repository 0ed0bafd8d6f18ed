"""A PostgreSQL table of pgvector embeddings, asked exactly as production asks it: the question embedded
with the `dense` kind's encoder settings, one `ORDER BY vector <op> query LIMIT k` (exact scan, or the
table's HNSW/IVFFlat index when it has one), so the nightly measures the index the team serves.

Each worker thread keeps one connection with its statement prepared; `concurrency` says how many ask at
once. The index version is read from the table (its relation, row count and newest row version), so the
index-rebuild sensor sees a rebuilt or reloaded table; `version_query` replaces that with the team's own.
psycopg and pgvector are imported only when a connection is opened (`pip install 'retrieval-pipeline[pgvector]'`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from functools import cached_property
from typing import Any

from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.core.retrieval.retriever_kinds import RetrieverKind
from retrieval_pipeline.retrievers.encoders import Encoder, EncoderSettings
from retrieval_pipeline.retrievers.encoders.query_encoder import checked_encoder, opened_encoder
from retrieval_pipeline.retrievers.vector.pgvector_params import OPERATORS, PgvectorParams, connection_settings
from retrieval_pipeline.retrievers.vector.store import StoreFault, StoreUnreachable, query_vector, require_modules

MODULES = ("psycopg", "pgvector")


class PgvectorKind(RetrieverKind):
    """`kind: pgvector`: parameters, client libraries and encoder files checked, with nothing opened and no
    connection made; the table's columns probed when built."""

    Params = PgvectorParams

    def checked(self) -> None:
        settings, kind = self.params, KindContext.of(self)
        require_modules(MODULES, "pgvector", kind)
        if not (settings.dsn or settings.host or settings.dbname):
            raise kind.invalid("give dsn, or the connection's parts (host, port, dbname, user)", "dsn")
        self.encoding: EncoderSettings | None = checked_encoder(settings, kind)

    def build(self) -> PgvectorRetriever:
        settings, kind = self.params, KindContext.of(self)
        retriever = PgvectorRetriever(
            self.name, settings, opened_encoder(settings, self.encoding, kind), connection_settings(settings, kind)
        )
        retriever._columns_checked(kind)
        return retriever

    def corpus(self) -> frozenset[str]:
        return self._document_ids

    @cached_property
    def _document_ids(self) -> frozenset[str]:
        """Every id in the table (under `where`), so the label audit can tell a label naming no row."""
        from psycopg import sql

        settings = self.params
        retriever = PgvectorRetriever(self.name, settings, None, connection_settings(settings, KindContext.of(self)))
        try:
            query = sql.SQL("SELECT DISTINCT {}::text FROM {}{}").format(
                sql.Identifier(settings.id_column), _table(settings), _where(settings)
            )
            return frozenset(row[0] for row in retriever._rows(query, ()))
        finally:
            retriever.close()


class PgvectorRetriever:
    """The nearest rows of the table by the configured distance, best first."""

    def __init__(self, identifier: str, params: PgvectorParams, encoder: Encoder | None, connect: Mapping[str, Any]):
        self.identifier = identifier
        self.params = params
        self.concurrency = params.concurrency
        self.fail_fast_after = params.fail_fast_after
        self._encoder = encoder
        self._connect = dict(connect)
        self._local = threading.local()
        self._connections: list[Any] = []
        self._lock = threading.Lock()
        self._search = _search_statement(params)

    def retrieve(self, question: str, limit: int) -> list[str]:
        if limit <= 0:
            return []
        vector = query_vector(self._encoder, self.params, question)
        return [row[0] for row in self._rows(self._search, (vector, limit), prepare=True)]

    def index_version(self) -> str:
        """`version_query`'s row, or the table's relation (a new one when it is dropped and recreated), its
        file (a new one after TRUNCATE or VACUUM FULL), its row count and its newest row version (xmin)."""
        from psycopg import sql

        if self.params.version_query is not None:
            rows = self._rows(sql.SQL(self.params.version_query), ())
            if not rows:
                raise StoreFault(f"retriever {self.identifier}: version_query returned no row")
            return " ".join(str(value) for value in rows[0])
        query = sql.SQL(
            "SELECT c.oid::bigint, c.relfilenode::bigint, t.rows, t.newest FROM pg_class c, "
            "(SELECT count(*) AS rows, coalesce(max(xmin::text::bigint), 0) AS newest FROM {table}{where}) t "
            "WHERE c.oid = {name}::regclass"
        ).format(table=_table(self.params), where=_where(self.params), name=sql.Literal(self._table_name()))
        relation, filenode, rows, newest = self._rows(query, ())[0]
        return f"relation {relation}.{filenode}, {rows} rows, newest xmin {newest}"

    def build_report(self) -> dict[str, str | int | float | bool]:
        return {"table": self.params.table, "distance": self.params.distance, "runtime": self._encoder.runtime}

    def close(self) -> None:
        with self._lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()

    def __repr__(self) -> str:
        return f"PgvectorRetriever({self.identifier!r}, table={self.params.table})"

    def _columns_checked(self, kind: KindContext) -> None:
        """A missing table, column or filter is refused at build, naming it, rather than on every question."""
        from psycopg import sql

        probe = sql.SQL("SELECT {}::text, {} FROM {}{} LIMIT 0").format(
            sql.Identifier(self.params.id_column),
            sql.Identifier(self.params.vector_column),
            _table(self.params),
            _where(self.params),
        )
        try:
            self._rows(probe, ())
        except StoreFault as error:
            self.close()
            raise kind.invalid(str(error), "dsn" if isinstance(error, StoreUnreachable) else "table") from None

    def _rows(self, query, arguments: tuple, prepare: bool | None = None) -> list[tuple]:
        import psycopg

        connection = self._connection()
        try:
            return connection.execute(query, arguments, prepare=prepare).fetchall()
        except psycopg.errors.QueryCanceled:
            raise StoreFault(f"{self._where_said()}: no answer within timeout_seconds={self.params.timeout_seconds:g}") from None
        except psycopg.OperationalError as error:  # the connection broke: the next question opens a new one
            self._forget(connection)
            raise StoreUnreachable(scrub(f"{self._where_said()}: {_first_line(error)}")) from None
        except psycopg.Error as error:
            raise StoreFault(scrub(f"{self._where_said()}: {type(error).__name__}: {_first_line(error)}")) from None

    def _connection(self):
        connection = getattr(self._local, "connection", None)
        if connection is not None and not connection.closed:
            return connection
        import psycopg
        from pgvector.psycopg import register_vector

        try:
            connection = psycopg.connect(autocommit=True, **self._connect)
        except psycopg.Error as error:  # libpq's text names host and port, never the password; scrubbed anyway
            raise StoreUnreachable(
                scrub(f"cannot connect to PostgreSQL for table {self.params.table}: {_first_line(error)}")
            ) from None
        try:
            register_vector(connection)
        except psycopg.ProgrammingError:
            connection.close()
            raise StoreFault(f"table {self.params.table}: the database has no vector type (CREATE EXTENSION vector)") from None
        with self._lock:
            self._connections.append(connection)
        self._local.connection = connection
        return connection

    def _forget(self, connection) -> None:
        self._local.connection = None
        with self._lock:
            if connection in self._connections:
                self._connections.remove(connection)
        connection.close()

    def _table_name(self) -> str:
        return ".".join(f'"{part}"' for part in self.params.table.split("."))

    def _where_said(self) -> str:
        params = self.params
        return f"table {params.table} (id_column {params.id_column}, vector_column {params.vector_column})"


def _search_statement(params: PgvectorParams):
    from psycopg import sql

    return sql.SQL("SELECT {}::text FROM {}{} ORDER BY {} {} %s LIMIT %s").format(
        sql.Identifier(params.id_column),
        _table(params),
        _where(params),
        sql.Identifier(params.vector_column),
        sql.SQL(OPERATORS[params.distance]),
    )


def _table(params: PgvectorParams):
    from psycopg import sql

    return sql.Identifier(*params.table.split("."))


def _where(params: PgvectorParams):
    from psycopg import sql

    return sql.SQL("") if params.where is None else sql.SQL(" WHERE ({})").format(sql.SQL(params.where))


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
