"""Retrieval-quality evaluation: golden question sets, top-k document hit rates, history, regressions.

As a library: `evaluate(question_set, retriever)` and `compare(question_set, retrievers)` return the views
every output lays out, with `to_dict()` (the command line's JSON) and `to_markdown()`; see docs/library.md.
They are imported on first use, so `import retrieval_pipeline` (and the command line's start) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from retrieval_pipeline.core.services.library import compare, evaluate

__all__ = ["compare", "evaluate"]


def __getattr__(name: str):
    if name in __all__:
        from retrieval_pipeline.core.services import library

        return getattr(library, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
