"""The optional parts of this project (its extras, `pyproject.toml`) and the one way whatever needs one
refuses without it: before any work, one line naming the modules missing and the command that installs
the extra (a kind when the configuration is checked, `coverage` before the log is read, a demo before it
runs). Modules are looked up, never imported, so the check costs nothing where they are installed."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable


def install_command(extra: str) -> str:
    """The one command that installs an extra of this project, as the README installs the project."""
    return f"pip install -e '.[{extra}]'"


def missing_modules(modules: Iterable[str]) -> list[str]:
    """Those of `modules` (top-level names) that cannot be imported here."""
    return [module for module in modules if importlib.util.find_spec(module) is None]


def missing_extra(modules: Iterable[str], extra: str) -> str | None:
    """`onnxruntime, tokenizers not installed: pip install -e '.[dense]'`, or None when all are installed."""
    missing = missing_modules(modules)
    return f"{', '.join(missing)} not installed: {install_command(extra)}" if missing else None
