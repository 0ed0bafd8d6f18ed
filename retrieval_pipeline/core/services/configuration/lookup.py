"""Which configuration a command reads when none is named: the one place its variable and file name live.

Light on purpose (no pydantic, no YAML): the command line's options and the Dagster code location name
these before any configuration is loaded.
"""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_ENV_VAR = "RETRIEVAL_EVAL_CONFIG"
CONFIG_FILE_NAME = "retrieval-eval.yaml"
STORE_ENV_VAR = "RETRIEVAL_EVAL_STORE"
"""Replaces the configuration's `store`: read by the CLI's --store and by the Dagster code location."""
DEMO_NOTE = (
    f"no configuration was named, so the embedded demo is in use; name yours with --config FILE, "
    f"${CONFIG_ENV_VAR}, or a {CONFIG_FILE_NAME} in the current folder or a parent"
)


def demo_config_path() -> Path:
    """The embedded demo, used when no configuration is given."""
    return Path(__file__).resolve().parents[3] / "demo" / "config.yaml"


def find_config_file(start: Path) -> Path | None:
    """`retrieval-eval.yaml` in `start` or the nearest parent holding one, as ruff and pytest find theirs."""
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_FILE_NAME
        if candidate.is_file():
            return candidate
    return None


def default_config_path(cwd: Path | None = None) -> Path:
    """$RETRIEVAL_EVAL_CONFIG, else a `retrieval-eval.yaml` found from `cwd` up, else the embedded demo."""
    explicit = os.environ.get(CONFIG_ENV_VAR)
    if explicit:
        return Path(explicit)
    return find_config_file((cwd or Path.cwd()).resolve()) or demo_config_path()
