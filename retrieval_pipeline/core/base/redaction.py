"""Retriever parameters made safe to show: Dagster metadata and fingerprints never carry a secret.

Secrets come from environment variables (`{env: VAR}`); only the variable's name is kept. Any literal
under a secret-looking key is replaced too, in case someone wrote a token straight into the file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

REDACTED = "<redacted>"
_SECRET_NAME_PARTS = ("secret", "token", "password", "passwd", "key", "auth", "credential", "cookie", "header")


def redacted(value: Any, sensitive: bool = False) -> Any:
    """Parameters safe to show: `{env: VAR}` keeps only the variable's name (never its value), and every
    literal under a secret-looking key (headers, tokens, keys, passwords, ...) is replaced."""
    if isinstance(value, Mapping):
        if "env" in value:  # {env: VAR, prefix: ...}: the variable's name only
            return {"env": str(value["env"])}
        return {str(k): redacted(v, sensitive or secret_name(str(k))) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redacted(item, sensitive) for item in value]
    return REDACTED if sensitive and value is not None else value


def fingerprint(kind: str, configuration: Mapping[str, Any]) -> str:
    """A short hash of the kind and its redacted parameters: equal fingerprints, equal configuration."""
    canonical = json.dumps({"kind": kind, "params": configuration}, sort_keys=True, default=str)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:16]


def secret_name(name: str) -> bool:
    """A key, token, password, ... by its name: a parameter's, a header's or a url query's."""
    lowered = name.lower()
    return any(part in lowered for part in _SECRET_NAME_PARTS)
