"""Fixtures for the retriever tests: the HTTP search service, started and stopped around each test."""

from __future__ import annotations

import pytest
from http_service import SECRET, TOKEN_VAR, Service, running


@pytest.fixture
def service():
    with running(Service()) as server:
        yield server


@pytest.fixture
def token(monkeypatch):
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    return SECRET
