"""`package.module:function`, the way a configuration names code of the user's own (an encoder, a judge):
imported when the configuration is checked, so a wrong name is refused before any run."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from retrieval_pipeline.retrievers.base.kind_context import KindContext

DOTTED_PATTERN = r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$"


def imported_callable(dotted: str, kind: KindContext, field: str) -> Callable[..., Any]:
    """Not installed, not there, or failing on import are all "cannot use", named with the field."""
    module_name, _, attributes = dotted.partition(":")
    try:
        found: Any = importlib.import_module(module_name)
        for attribute in attributes.split("."):
            found = getattr(found, attribute)
    except Exception as error:  # noqa: BLE001
        raise kind.invalid(f"cannot import {dotted}: {type(error).__name__}: {error}", field) from None
    if not callable(found):
        raise kind.invalid(f"{dotted} is not callable", field)
    return found
