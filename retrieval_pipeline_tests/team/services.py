"""The team deployment started for real on loopback (PostgreSQL, Redis, a code server, the daemon, the
webserver, Celery workers) from the files under deploy/team/: used by the team test and by benchmarks/bench_team.py.
Runs reach the workers as a team starts them (docs/production.md): `dagster job backfill` (what the UI's
"Launch backfill" does), the schedule and the sensors, each run one partition through the queued coordinator
and the Celery run launcher.

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
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

GRACE_SECONDS = 5
DAEMON_START_SECONDS = 60
BACKFILL_TAG = "dagster/backfill"
"""Dagster's tag on every run of a backfill (its id), from the UI or `dagster job backfill`."""
SENSOR_NAME_TAG = "dagster/sensor_name"
"""Dagster's tag on every run a sensor requested, the automation sensor's included (its name)."""
PARTITION_TAG = "dagster/partition"
TEAM = Path(__file__).resolve().parents[2] / "deploy" / "team"
BIN = Path(sys.executable).parent


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


def start(
    name: str, command: list[str], logs: Path, env: dict | None = None, cwd: Path | None = None, stop_signal=signal.SIGTERM
) -> Service:
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
    initdb = as_postgres_user(
        [postgres_binary("initdb"), "-D", str(data / "db"), "-U", user, "-A", "trust", "--no-sync", "-E", "UTF8"]
    )
    subprocess.run(initdb, check=True, capture_output=True, cwd=data)
    command = [
        postgres_binary("postgres"),
        "-D",
        str(data / "db"),
        "-p",
        str(port),
        "-k",
        str(data),
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "fsync=off",
        "-c",
        "max_connections=200",
    ]
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


def team_environment(root: Path, config: Path, store: Path) -> tuple[dict[str, str], dict[str, int]]:
    """deploy/team/team.env with values for this host and free ports: every variable it names, only those."""
    ports = {name: free_port() for name in ("postgres", "redis", "code", "webserver")}
    documented = [
        line.split("=", 1)[0] for line in (TEAM / "team.env").read_text().splitlines() if line and not line.startswith("#")
    ]
    values = {
        "DAGSTER_HOME": str(root / "dagster_home"),
        "DAGSTER_PG_HOST": "127.0.0.1",
        "DAGSTER_PG_PORT": str(ports["postgres"]),
        "DAGSTER_PG_DB": "dagster",
        "DAGSTER_PG_USERNAME": "dagster",
        "DAGSTER_PG_PASSWORD": "unused-with-trust-auth",
        "DAGSTER_CELERY_BROKER_URL": f"redis://127.0.0.1:{ports['redis']}/0",
        "DAGSTER_CELERY_BACKEND_URL": f"redis://127.0.0.1:{ports['redis']}/1",
        "DAGSTER_GRPC_HOST": "127.0.0.1",
        "DAGSTER_GRPC_PORT": str(ports["code"]),
        "RETRIEVAL_EVAL_CONFIG": str(config),
        "RETRIEVAL_EVAL_STORE": str(store),
        "RETRIEVAL_EVAL_CACHE": str(root / "cache"),
    }
    if sorted(values) != sorted(documented):
        raise AssertionError(f"deploy/team/team.env names {sorted(documented)}, the deployment sets {sorted(values)}")
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER_", "RETRIEVAL_EVAL_"))}
    return {**inherited, **values, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}, ports


@contextmanager
def team_services(root: Path, env: dict[str, str], ports: dict[str, int], workers: int = 1) -> Iterator[list[Service]]:
    """Start everything (PostgreSQL, Redis, code server, daemon, webserver, `workers` Celery workers of two slots),
    yield the services, and stop them all on the way out, whatever happened in between."""
    logs = root / "logs"
    logs.mkdir(exist_ok=True)
    home = Path(env["DAGSTER_HOME"])
    home.mkdir(exist_ok=True)
    shutil.copy(TEAM / "dagster.yaml", home / "dagster.yaml")
    services: list[Service] = []
    data_dir = None
    try:
        postgres, data_dir = start_postgres(logs, ports["postgres"], env["DAGSTER_PG_USERNAME"])
        services.append(postgres)
        wait_for_port(ports["postgres"], postgres.process, "PostgreSQL")
        createdb = [
            postgres_binary("createdb"),
            "-h",
            "127.0.0.1",
            "-p",
            str(ports["postgres"]),
            "-U",
            env["DAGSTER_PG_USERNAME"],
            env["DAGSTER_PG_DB"],
        ]
        subprocess.run(createdb, check=True, capture_output=True)
        redis = start(
            "redis",
            ["redis-server", "--port", str(ports["redis"]), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            logs,
        )
        services.append(redis)
        wait_for_port(ports["redis"], redis.process, "Redis")
        code = start(
            "code-server", [str(BIN / "dagster"), "api", "grpc", "-m", "retrieval_pipeline.definitions"], logs, env, root
        )
        services.append(code)
        wait_for_port(ports["code"], code.process, "the code server", timeout=90)
        services.append(
            start("daemon", [str(BIN / "dagster-daemon"), "run", "-w", str(TEAM / "workspace.yaml")], logs, env, root)
        )
        webserver = [
            str(BIN / "dagster-webserver"),
            "-h",
            "127.0.0.1",
            "-p",
            str(ports["webserver"]),
            "-w",
            str(TEAM / "workspace.yaml"),
        ]
        services.append(start("webserver", webserver, logs, env, root))
        wait_for_port(ports["webserver"], services[-1].process, "the webserver", timeout=90)
        for number in range(1, workers + 1):
            worker = [
                str(BIN / "dagster-celery"),
                "worker",
                "start",
                "-A",
                "dagster_celery.app",
                "-y",
                str(TEAM / "celery-worker.yaml"),
                "-n",
                f"worker-{number}",
                "-l",
                "WARNING",
                "--",
                "--concurrency=2",
            ]
            services.append(start(f"celery-worker-{number}", worker, logs, env, root))
        yield services
    finally:
        for service in reversed(services):
            service.stop()
        if data_dir is not None:
            shutil.rmtree(data_dir, ignore_errors=True)


@dataclass
class TeamDeployment:
    root: Path
    env: dict[str, str]
    project: object
    services: list[Service]
    webserver: str
    """The webserver's URL: the UI a team launches backfills from."""

    @property
    def workspace(self) -> Path:
        return TEAM / "workspace.yaml"

    def service(self, name: str) -> Service:
        return next(s for s in self.services if s.name == name)

    def command(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
        """A command of this deployment (dagster, retrieval-eval), with every process's environment."""
        return subprocess.run(
            [str(BIN / args[0]), *args[1:]], env=self.env, cwd=self.root, capture_output=True, text=True, timeout=timeout
        )

    def backfill(self, instance, job: str) -> list[str]:
        """`dagster job backfill` of every partition of `job`, as docs/production.md shows it; the ids of the
        runs it queued (one per partition), which the daemon then hands to the Celery workers."""
        from dagster import RunsFilter

        before = {run.run_id for run in instance.get_runs(filters=RunsFilter(job_name=job))}
        command = ("dagster", "job", "backfill", "-j", job, "-w", str(self.workspace), "--noprompt", "--all")
        result = self.command(*command)
        if result.returncode != 0:
            raise AssertionError(f"{' '.join(command)} exited {result.returncode}\n{result.stdout}\n{result.stderr}")
        runs = instance.get_runs(filters=RunsFilter(job_name=job))
        return [run.run_id for run in runs if run.run_id not in before and BACKFILL_TAG in run.tags]

    def logs(self) -> str:
        return "\n".join(s.tail() for s in self.services)


def wait_for(condition, what: str, timeout: float, details=lambda: "", interval: float = 0.5):
    """`condition()`'s first true value, checked every `interval` seconds for at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s\n{details()}")
        time.sleep(interval)


def wait_for_daemon(instance, details=lambda: "") -> None:
    """The daemon is up and dequeuing: until then a backfill's runs would only wait in the queue."""
    wait_for(
        lambda: "QUEUED_RUN_COORDINATOR" in instance.get_daemon_heartbeats(),
        "the daemon's run queue",
        DAEMON_START_SECONDS,
        details,
    )


def wait_for_runs(instance, run_ids: list[str], timeout: float, details=lambda: "", interval: float = 0.5) -> list:
    """The runs, once every one of them has finished (succeeded, failed or canceled)."""
    from dagster import DagsterRunStatus, RunsFilter

    done = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}

    def finished():
        runs = instance.get_runs(filters=RunsFilter(run_ids=list(run_ids)))
        return runs if len(runs) == len(run_ids) and all(run.status in done for run in runs) else None

    return wait_for(finished, f"{len(run_ids)} run(s) to finish", timeout, details, interval)


def refreshed_after(instance, asset, runs: list, partition: str | None = None):
    """The first successful run of `asset` (an AssetKey; of `partition`) that the automation sensor
    (`retrieval_automation`) requested by itself after every one of `runs` had finished, as a run record;
    None while there is none."""
    from dagster import DagsterRunStatus, RunsFilter

    from retrieval_pipeline.dagster_layer.sensors import AUTOMATION_SENSOR

    ends = [instance.get_run_record_by_id(run.run_id).end_time for run in runs]
    if not ends or None in ends:
        return None
    automated = RunsFilter(tags={SENSOR_NAME_TAG: AUTOMATION_SENSOR}, statuses=[DagsterRunStatus.SUCCESS])
    records = sorted(instance.get_run_records(filters=automated), key=lambda record: record.start_time or 0)
    return next(
        (
            record
            for record in records
            if asset in (record.dagster_run.asset_selection or ())
            and (partition is None or record.dagster_run.tags.get(PARTITION_TAG) == partition)
            and record.start_time >= max(ends)
        ),
        None,
    )


@contextmanager
def team_instance(env: dict[str, str]):
    """A test's own view of the team instance (PostgreSQL), with the environment every process has."""
    from dagster import DagsterInstance

    saved = dict(os.environ)
    os.environ.update({k: v for k, v in env.items() if k.startswith("DAGSTER_PG_")})
    try:
        with DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
            yield instance
    finally:
        os.environ.clear()
        os.environ.update(saved)


def require_team() -> None:
    """Skips the test unless the services and the [team] extra are here."""
    import pytest

    missing = missing_services()
    if missing:
        pytest.skip(f"the team deployment test needs {', '.join(missing)} (.ci/run installs postgresql and redis-server)")
    pytest.importorskip("dagster_celery", reason="the team deployment needs the [team] extra")
    pytest.importorskip("dagster_postgres", reason="the team deployment needs the [team] extra")
