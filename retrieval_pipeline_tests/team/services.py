"""Real services for the team deployment test: PostgreSQL, Redis and Dagster processes on loopback.

Each process starts in its own session (process group), so stopping it stops its children too (the
Celery worker's pool, the daemon's code-server clients, postgres's backends). `initdb` refuses to run
as root, so as root PostgreSQL runs as the `postgres` user in a folder that user owns.
"""

from __future__ import annotations

import glob
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

GRACE_SECONDS = 5


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with code {process.returncode} before listening on port {port}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"{what} did not listen on 127.0.0.1:{port} within {timeout:.0f} s")


def postgres_binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def missing_services() -> list[str]:
    return [name for name in ("initdb", "postgres") if postgres_binary(name) is None] + (
        [] if shutil.which("redis-server") else ["redis-server"]
    )


@dataclass
class Service:
    name: str
    process: subprocess.Popen
    log: Path
    stop_signal: int = signal.SIGTERM

    def stop(self) -> None:
        """Ask the whole group to stop, then kill what is left (the gRPC code server ignores SIGTERM)."""
        for sig, wait in ((self.stop_signal, GRACE_SECONDS), (signal.SIGKILL, GRACE_SECONDS)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.process.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
            if not _group_alive(self.process.pid):
                return

    def tail(self, lines: int = 40) -> str:
        text = self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""
        return f"--- {self.name} ({self.log}) ---\n" + "\n".join(text.splitlines()[-lines:])


def start(name: str, command: list[str], logs: Path, env: dict | None = None, cwd: Path | None = None, stop_signal=signal.SIGTERM) -> Service:
    log = logs / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True)
    return Service(name, process, log, stop_signal)


def as_postgres_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def postgres_data_dir() -> Path:
    """Outside pytest's root-only tmp folder, owned by whoever runs the server."""
    folder = Path(tempfile.mkdtemp(prefix="retrieval-eval-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    return folder


def start_postgres(logs: Path, port: int, user: str) -> tuple[Service, Path]:
    data = postgres_data_dir()
    initdb = as_postgres_user([postgres_binary("initdb"), "-D", str(data / "db"), "-U", user, "-A", "trust", "--no-sync", "-E", "UTF8"])
    subprocess.run(initdb, check=True, capture_output=True, cwd=data)
    command = [postgres_binary("postgres"), "-D", str(data / "db"), "-p", str(port), "-k", str(data),
               "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200"]
    return start("postgres", as_postgres_user(command), logs, cwd=data, stop_signal=signal.SIGINT), data


def listening_addresses(pgids: set[int]) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket listening in the given process groups, from /proc."""
    inodes: set[str] = set()
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            fields = Path(stat).read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) not in pgids:
                continue
            fd_dir = Path(stat).parent / "fd"
            inodes.update(os.readlink(fd)[8:-1] for fd in fd_dir.iterdir() if os.readlink(fd).startswith("socket:["))
        except (OSError, IndexError, ValueError):
            continue
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        for line in Path(table).read_text().splitlines()[1:]:
            parts = line.split()
            if parts[3] == "0A" and parts[9] in inodes:
                address, port = parts[1].split(":")
                found.add((_address(address, width), int(port, 16)))
    return found


def _address(hex_address: str, width: int) -> str:
    raw = bytes.fromhex(hex_address)
    if width == 8:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    address = ipaddress.IPv6Address(b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4)))
    return str(address.ipv4_mapped or address)  # gRPC listens on ::ffff:127.0.0.1 for 127.0.0.1


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True
