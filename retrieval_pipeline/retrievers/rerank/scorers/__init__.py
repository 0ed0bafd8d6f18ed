"""How `kind: rerank` rescores the first stage's documents: one small module per scorer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Scorer(Protocol):
    """What the rerank asks of a scorer; its parameters' `build` makes one."""

    concurrency: int  # questions it may score at once

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        """One relevance per text, larger for more relevant."""
        ...

    def version(self) -> str:
        """Changes when its model does, so a new model re-evaluates the rerank like a rebuilt index."""
        ...
