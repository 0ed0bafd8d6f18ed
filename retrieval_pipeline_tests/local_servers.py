"""Test servers on 127.0.0.1, served for the length of a block however it ends."""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

Server = TypeVar("Server", bound=socketserver.BaseServer)


@contextmanager
def running(server: Server) -> Iterator[Server]:
    """Serves in a daemon thread until the block ends; stopped and its port closed on the way out."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def closed_port_url(path: str) -> str:
    """A url on a port nothing listens on: bound for a moment to find a free one, then released."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}{path}"
