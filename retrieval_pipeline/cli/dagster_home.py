"""Where `retrieval-eval nightly` keeps its Dagster instance, so that `dagster dev` started afterwards
with the same DAGSTER_HOME shows every run it made.

$DAGSTER_HOME when set, else `.dagster_home` in the current folder (created). A home without a
`dagster.yaml` gets the project's (the `dagster.yaml` of the current folder, else the same settings
embedded here: telemetry off, at most two concurrent runs), because Dagster reads the instance
configuration from DAGSTER_HOME, not from the folder `dagster dev` is started in.

One command at a time uses a home: Dagster neither guards a fresh home's SQLite databases, which
`nightly` commands started together would each create (`UNIQUE constraint failed: alembic_version`,
`table ... already exists`), nor takes two commands' runs on one SQLite instance reliably (`unable to
open database file`). So a command claims the home, by a lock file in it, from preparing it until the
command's process ends (the system releases the lock however it ends), and one started meanwhile says
that it waits, then runs.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import IO, TYPE_CHECKING

import click

from retrieval_pipeline.core.base.errors import InvalidInputError, clip, one_line

if TYPE_CHECKING:
    from dagster import DagsterInstance

DEFAULT_HOME = ".dagster_home"
LOCK_FILE = ".retrieval-eval.lock"
DEFAULT_INSTANCE_YAML = """\
# The local Dagster instance: SQLite storage under DAGSTER_HOME (Dagster's default), no telemetry, and
# at most two runs at once (the schedule and the sensor queue the rest). See docs/production.md.
telemetry:
  enabled: false

concurrency:
  runs:
    max_concurrent_runs: 2

# The queue starts a queued run within a second (Dagster's default polls every 5 s), each in a thread:
# `retrieval-eval nightly` launches a level of runs at a time and waits for it (docs/dagster.md).
run_coordinator:
  module: dagster.core.run_coordinator
  class: QueuedRunCoordinator
  config:
    dequeue_interval_seconds: 1
    dequeue_use_threads: true
"""


def prepare_dagster_home(cwd: Path | None = None) -> tuple[Path, str | None]:
    """The instance folder (created and claimed, see the module), and where its dagster.yaml came from when
    this call wrote it."""
    cwd = cwd or Path.cwd()
    explicit = os.environ.get("DAGSTER_HOME")
    home = (Path(explicit).expanduser() if explicit else cwd / DEFAULT_HOME).resolve()
    try:
        home.mkdir(parents=True, exist_ok=True)
        _claim(home)
        return home, _seeded(home, cwd)
    except OSError as error:
        where = "$DAGSTER_HOME" if explicit else "the current folder"
        raise InvalidInputError(
            f"cannot prepare the Dagster instance folder ({error.strerror or error}); check {where}", source=str(home)
        ) from None


def open_instance(home: Path) -> DagsterInstance:
    """The instance of the home prepared, made this process's DAGSTER_HOME; one its dagster.yaml describes
    that Dagster cannot open (unparsable, naming a storage module that cannot be imported) is one line
    naming the file."""
    from dagster import DagsterInstance

    os.environ["DAGSTER_HOME"] = str(home)  # this process's Dagster instance is the one `nightly` printed
    _claim(home)
    try:
        return DagsterInstance.get()
    except Exception as error:  # noqa: BLE001 - yaml's ParserError, Dagster's config or import failure
        cause = clip(one_line(f"{type(error).__name__}: {error}"))
        raise InvalidInputError(
            f"Dagster cannot open the instance it describes ({cause})", source=str(home / "dagster.yaml")
        ) from None


_CLAIMED: dict[Path, IO[str]] = {}
"""The homes this process holds, each by its open lock file: claimed once, kept until the process ends."""


def _claim(home: Path) -> None:
    import fcntl

    if home in _CLAIMED:
        return
    lock = open(home / LOCK_FILE, "a")  # kept open: closing it would release the claim
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        click.echo(f"Waiting for the other command using the Dagster instance {home} to finish…", err=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    _CLAIMED[home] = lock


def _seeded(home: Path, cwd: Path) -> str | None:
    target = home / "dagster.yaml"
    if target.exists():
        return None
    project_yaml = cwd / "dagster.yaml"
    if project_yaml.is_file() and project_yaml.resolve() != target:
        shutil.copyfile(project_yaml, target)  # bytes as they are: Dagster reads the file, not us
        return str(project_yaml)
    target.write_text(DEFAULT_INSTANCE_YAML, encoding="utf-8")
    return "the defaults built into retrieval-eval"
