"""A urllib3 pool whose timeout caps a whole request (connect, headers and body together), and plain
words for what went wrong on the wire.

urllib3's timeouts bound each socket operation, so a server trickling one byte just inside the read
timeout holds a request as long as it likes. Here the response reads its socket through a reader that
checks one monotonic deadline before every read and gives the socket only the time left, so headers and
body share the budget. urllib3 builds the response deep inside its own call, hence the deadline travels
in a context variable, set per request by `deadline_after` in the thread that makes the request.
"""

from __future__ import annotations

import http.client
import io
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import urllib3
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

_deadline: ContextVar[float | None] = ContextVar("retrieval_pipeline_http_deadline", default=None)


class DeadlineExceeded(TimeoutError):
    """A TimeoutError, so urllib3 reports it as the read timeout it is."""


class _DeadlineReader(io.RawIOBase):
    """The socket file http.client opened, each read given only the time left before the deadline.

    It keeps that file (not just the socket) because the file holds a reference that keeps the socket
    open while a response is read after its connection was closed (`Connection: close`)."""

    def __init__(self, socket_file, sock, deadline: float):
        super().__init__()
        self._file = socket_file
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int | None:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded("the request's total time ran out")
        self._sock.settimeout(remaining)
        return self._file.readinto(buffer)

    def close(self) -> None:
        self._file.close()
        super().close()


class _DeadlineResponse(http.client.HTTPResponse):
    def __init__(self, sock, *args, **kwargs):
        super().__init__(sock, *args, **kwargs)
        deadline = _deadline.get()
        if deadline is not None:
            self.fp = io.BufferedReader(_DeadlineReader(self.fp.detach(), sock, deadline))


class _HTTPConnection(urllib3.connection.HTTPConnection):
    response_class = _DeadlineResponse


class _HTTPSConnection(urllib3.connection.HTTPSConnection):
    response_class = _DeadlineResponse


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


def deadline_pool_manager(timeout_seconds: float, **pool_options) -> urllib3.PoolManager:
    """Connecting gets the whole budget (it comes first); every read after it gets what is left."""
    manager = urllib3.PoolManager(timeout=urllib3.Timeout(connect=timeout_seconds, read=timeout_seconds), **pool_options)
    manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}  # as urllib3's SOCKS manager does
    return manager


@contextmanager
def deadline_after(seconds: float) -> Iterator[float]:
    """Requests made in the block must complete before the deadline it yields (a monotonic time)."""
    deadline = time.monotonic() + seconds
    token = _deadline.set(deadline)
    try:
        yield deadline
    finally:
        _deadline.reset(token)


def unreachable_reason(error: urllib3.exceptions.HTTPError) -> str | None:
    """Why no connection was made, in words stable across questions (urllib3's own text names the
    connection object's address), so a run's failures group by cause; None when a connection was made."""
    if isinstance(error, urllib3.exceptions.NameResolutionError):
        return "host name not resolved"
    if isinstance(error, urllib3.exceptions.NewConnectionError):
        cause = error.__cause__ or error.__context__
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, OSError) and cause.strerror:
            return f"cannot connect: {cause.strerror}"
        return "cannot connect"
    if isinstance(error, urllib3.exceptions.ConnectTimeoutError):
        return "no connection within the timeout"
    return None
