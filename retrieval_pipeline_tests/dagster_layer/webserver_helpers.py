"""Starting the real `dagster-webserver` on a free loopback port for a test, and always stopping it; and
the command `nightly` prints for the UI, read as a person copies it."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests

REPO_ROOT = Path(__file__).resolve().parents[2]
WEBSERVER = Path(sys.executable).with_name("dagster-webserver")
START_TIMEOUT_SECONDS = 60
LOCATION_QUERY = "{ locationStatusesOrError { ... on WorkspaceLocationStatusEntries { entries { name loadStatus } } } }"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fresh_dagster_home(folder: Path) -> Path:
    """A new instance configured as the project's own `dagster.yaml` configures the local one."""
    folder.mkdir()
    (folder / "dagster.yaml").write_text((REPO_ROOT / "dagster.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def printed_hint(output: str) -> tuple[dict[str, str], list[str]]:
    """The environment and the command of the line `nightly` prints for the UI."""
    [line] = [line for line in output.splitlines() if "dagster dev" in line]
    words = shlex.split(line)
    environment = dict(word.split("=", 1) for word in words if "=" in word and not word.startswith("-"))
    return environment, [word for word in words if "=" not in word or word.startswith("-")]


def graphql(url: str, query: str) -> dict:
    response = requests.post(f"{url}/graphql", json={"query": query}, timeout=20)
    response.raise_for_status()
    body = response.json()
    assert "errors" not in body, body["errors"]
    return body["data"]


@contextmanager
def running_webserver(home: Path, config: Path, log: Path, target: list[str], cwd: Path = REPO_ROOT):
    """Yields the base URL once the code location is loaded; `target` is `-w workspace.yaml` or `-m module`."""
    if not WEBSERVER.exists():
        pytest.skip(f"dagster-webserver not found beside {sys.executable}")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "DAGSTER_HOME": str(home), "RETRIEVAL_EVAL_CONFIG": str(config)}
    with log.open("wb") as output:
        server = subprocess.Popen(
            [str(WEBSERVER), "-h", "127.0.0.1", "-p", str(port), *target],
            cwd=cwd,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_until_loaded(url, server, log)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=5)


def _wait_until_loaded(url: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"dagster-webserver exited with {server.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            entries = graphql(url, LOCATION_QUERY)["locationStatusesOrError"]["entries"]
            if entries and all(entry["loadStatus"] == "LOADED" for entry in entries):
                return
        except (requests.RequestException, KeyError, TypeError):
            pass
        time.sleep(0.5)
    pytest.fail(f"dagster-webserver not ready in {START_TIMEOUT_SECONDS}s:\n{log.read_text(errors='replace')[-3000:]}")
