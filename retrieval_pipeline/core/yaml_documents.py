"""YAML documents (configuration and set files) read by PyYAML's safe loader, in C when PyYAML has it.

libyaml's parser reads the 240-question demo set in ~0.05 s where the pure-Python one takes ~0.3 s,
and a nightly reads every set file once per Dagster run. Both are the same safe loader (same types,
same documents, errors with line and column); only the speed differs.
"""

from __future__ import annotations

from typing import Any


def safe_load(text: str) -> Any:
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
