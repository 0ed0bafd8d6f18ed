"""Fixtures for the retriever tests: the HTTP search service, started and stopped around each test, and
the dense tests' corpus (the demo's first documents) and build context."""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path

import pytest
from http_service import SECRET, TOKEN_VAR, Service, running

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


@pytest.fixture
def corpus(tmp_path, request) -> Path:
    """`corpus.jsonl`: the demo corpus's first `CORPUS_DOCUMENTS` (a constant of the test module, else 150)."""
    with gzip.open(DEMO_CORPUS, "rt", encoding="utf-8") as handle:
        lines = list(itertools.islice(handle, getattr(request.module, "CORPUS_DOCUMENTS", 150)))
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.fixture
def context(tmp_path) -> BuildContext:
    return BuildContext(base_dir=tmp_path, source="test.yaml", cache_dir=tmp_path / "cache")
