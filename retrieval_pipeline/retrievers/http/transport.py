"""A urllib3 pool whose timeout caps a whole request (name lookup, connect, headers and body
together), and plain words for what went wrong on the wire.

urllib3's timeouts bound each socket operation, so a server trickling one byte just inside the read
timeout holds a request as long as it likes. Here every read gets only the time left before one
deadline, carried in a context variable because urllib3 builds the response deep inside its own call.
Name lookup has no timeout at all (`socket.getaddrinfo` waits as long as the system resolver does), so
a new connection resolves its host in a daemon thread and waits only until the deadline;
`MAX_PENDING_LOOKUPS` bounds the abandoned lookups that can pile up while a resolver hangs.
"""

from __future__ import annotations

import http.client
import io
import ipaddress
import queue
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import urllib3
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.util.connection import allowed_gai_family

MAX_PENDING_LOOKUPS = 32

_deadline: ContextVar[float | None] = ContextVar("retrieval_pipeline_http_deadline", default=None)
_lookup_slots = threading.BoundedSemaphore(MAX_PENDING_LOOKUPS)


class DeadlineExceeded(TimeoutError):
    """A TimeoutError, so urllib3 reports it as the read timeout it is."""


class NameLookupTimeout(urllib3.exceptions.ConnectTimeoutError):
    """The resolver gave no address before the deadline, so no connection was even attempted."""


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
        self._sock.settimeout(_time_left(self._deadline))
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


class _DeadlineConnect:
    """urllib3's `_new_conn` (what its SOCKS connection overrides too), with lookup and connect under
    the request's deadline; errors are urllib3's own, so callers and `unreachable_reason` read them alike.
    A TLS handshake that follows gets the socket timeout left after connecting."""

    def _new_conn(self) -> socket.socket:
        deadline = _deadline.get()
        if deadline is None:
            return super()._new_conn()
        host = self._dns_host.strip("[]")
        try:
            addresses = _lookup_before(deadline, host, self.port)
        except UnicodeError:  # IDNA refuses the name
            raise urllib3.exceptions.LocationParseError(f"'{host}', label empty or too long") from None
        except socket.gaierror as error:
            raise urllib3.exceptions.NameResolutionError(self.host, self, error) from error
        except TimeoutError as error:
            raise NameLookupTimeout(self, f"No address for {self.host} before the deadline") from error
        try:
            sock = _connect_before(deadline, addresses, self.socket_options, self.source_address)
        except TimeoutError as error:
            raise urllib3.exceptions.ConnectTimeoutError(self, f"Connection to {self.host} timed out") from error
        except OSError as error:
            raise urllib3.exceptions.NewConnectionError(self, f"Failed to establish a new connection: {error}") from error
        sys.audit("http.client.connect", self, self.host, self.port)
        return sock


def _time_left(deadline: float) -> float:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise DeadlineExceeded("the request's total time ran out")
    return remaining


def _lookup_before(deadline: float, host: str, port: int) -> list:
    """`socket.getaddrinfo` as urllib3 calls it, waited for only until the deadline. An IP address is
    read in place: no name server is asked, and the thread would add noticeably to a new loopback
    connection's request."""

    def addresses() -> list:
        return socket.getaddrinfo(host, port, allowed_gai_family(), socket.SOCK_STREAM)

    if _is_ip_address(host):
        return addresses()
    answers: queue.SimpleQueue = queue.SimpleQueue()

    def lookup() -> None:
        try:
            answers.put(addresses())
        except Exception as error:  # handed to the waiting request, raised there
            answers.put(error)
        finally:
            _lookup_slots.release()

    if not _lookup_slots.acquire(timeout=_time_left(deadline)):
        raise DeadlineExceeded(f"{MAX_PENDING_LOOKUPS} name lookups already pending")
    threading.Thread(target=lookup, name=f"lookup {host}", daemon=True).start()
    try:
        answer = answers.get(timeout=_time_left(deadline))
    except queue.Empty:
        raise DeadlineExceeded("the name lookup ran out of time") from None
    if isinstance(answer, Exception):
        raise answer
    return answer


def _is_ip_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _connect_before(deadline: float, addresses: list, socket_options, source_address) -> socket.socket:
    """Each address in the resolver's order, each given only the time left (as urllib3's
    create_connection does with its fixed connect timeout)."""
    error: OSError = OSError("the name resolved to no address")
    for family, kind, protocol, _, address in addresses:
        sock = socket.socket(family, kind, protocol)
        try:
            for option in socket_options or ():
                sock.setsockopt(*option)
            sock.settimeout(_time_left(deadline))
            if source_address:
                sock.bind(source_address)
            sock.connect(address)
            return sock
        except OSError as failure:
            sock.close()
            error = failure
    raise error


class _HTTPConnection(_DeadlineConnect, urllib3.connection.HTTPConnection):
    response_class = _DeadlineResponse


class _HTTPSConnection(_DeadlineConnect, urllib3.connection.HTTPSConnection):
    response_class = _DeadlineResponse


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


def deadline_pool_manager(timeout_seconds: float, **pool_options) -> urllib3.PoolManager:
    """urllib3's own timeouts only serve a request made outside `deadline_after`."""
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
    if isinstance(error, NameLookupTimeout):
        return "host name not resolved within the timeout"
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
