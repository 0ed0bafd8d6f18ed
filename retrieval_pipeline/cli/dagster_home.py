"""Where `retrieval-eval nightly` keeps its Dagster instance, so that `dagster dev` started afterwards
with the same DAGSTER_HOME shows every run it made.

$DAGSTER_HOME when set, else `.dagster_home` in the current folder (created). A home without a
`dagster.yaml` gets the project's (the `dagster.yaml` of the current folder, else the same settings
embedded here: telemetry off, at most two concurrent runs), because Dagster reads the instance
configuration from DAGSTER_HOME, not from the folder `dagster dev` is started in.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError

DEFAULT_HOME = ".dagster_home"
DEFAULT_INSTANCE_YAML = """\
# The local Dagster instance: SQLite storage under DAGSTER_HOME (Dagster's default), no telemetry, and
# at most two runs at once (the schedule and the sensor queue the rest). See docs/production.md.
telemetry:
  enabled: false

concurrency:
  runs:
    max_concurrent_runs: 2
"""


def prepare_dagster_home(cwd: Path | None = None) -> tuple[Path, str | None]:
    """The instance folder (created), and where its dagster.yaml came from when this call wrote it."""
    cwd = cwd or Path.cwd()
    explicit = os.environ.get("DAGSTER_HOME")
    home = (Path(explicit).expanduser() if explicit else cwd / DEFAULT_HOME).resolve()
    try:
        return home, _seeded(home, cwd)
    except OSError as error:
        where = "$DAGSTER_HOME" if explicit else "the current folder"
        raise InvalidInputError(
            f"cannot prepare the Dagster instance folder ({error.strerror or error}); check {where}", source=str(home)
        ) from None


def _seeded(home: Path, cwd: Path) -> str | None:
    home.mkdir(parents=True, exist_ok=True)
    target = home / "dagster.yaml"
    if target.exists():
        return None
    project_yaml = cwd / "dagster.yaml"
    if project_yaml.is_file() and project_yaml.resolve() != target:
        shutil.copyfile(project_yaml, target)  # bytes as they are: Dagster reads the file, not us
        return str(project_yaml)
    target.write_text(DEFAULT_INSTANCE_YAML, encoding="utf-8")
    return "the defaults built into retrieval-eval"
