"""Fixtures for the retriever tests: the HTTP search service, started and stopped around each test."""

from __future__ import annotations

import threading

import pytest
from http_service import SECRET, TOKEN_VAR, Service


@pytest.fixture
def service():
    server = Service()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def token(monkeypatch):
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    return SECRET
