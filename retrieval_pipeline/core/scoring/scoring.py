"""The scoring protocol (SPEC section 3): small pure functions, one per rule."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

DEFAULT_CUTOFFS = (1, 3)
OVERFETCH_MULTIPLIER = 4


@dataclass(frozen=True)
class CutOffs:
    """Top-1 and top-3 are the methodology's metrics and always present; deeper ones may be added.

    The retriever is asked for the deepest cut-off times the overfetch multiplier, so a chunk-grained
    ranking still fills the deepest cut-off with distinct documents.
    """

    values: tuple[int, ...] = DEFAULT_CUTOFFS
    overfetch_multiplier: int = OVERFETCH_MULTIPLIER

    def __post_init__(self) -> None:
        values = tuple(self.values)
        if any(not isinstance(k, int) or isinstance(k, bool) or k < 1 for k in values):
            raise ValueError(f"cut-offs must be positive integers, got {list(values)}")
        if len(set(values)) != len(values) or list(values) != sorted(values):
            raise ValueError(f"cut-offs must be increasing without repeats, got {list(values)}")
        if not {1, 3} <= set(values):
            raise ValueError(f"cut-offs must include 1 and 3 (the top-1 and top-3 hit rates), got {list(values)}")
        if not isinstance(self.overfetch_multiplier, int) or self.overfetch_multiplier < 1:
            raise ValueError(f"the overfetch multiplier must be a positive integer, got {self.overfetch_multiplier!r}")
        object.__setattr__(self, "values", values)

    @property
    def deepest(self) -> int:
        return self.values[-1]

    @property
    def fetch_limit(self) -> int:
        return self.deepest * self.overfetch_multiplier


def collapse(raw_ranking: Iterable[str], depth: int) -> tuple[str, ...]:
    """Distinct document ids in rank order: empty ids skipped, first occurrence kept, `depth` at most."""
    distinct: dict[str, None] = {}
    for document_id in raw_ranking:
        if document_id and document_id not in distinct:
            distinct[document_id] = None
            if len(distinct) == depth:
                break
    return tuple(distinct)


def first_hit_rank(retrieved: Sequence[str], expected: Sequence[str]) -> int | None:
    """The 1-based distinct rank from which a question is a hit at every cut-off, None if at none.

    Any expected id counts. With no expected ids the question is a hit (from rank 1) only on silence.
    """
    if not expected:
        return None if retrieved else 1
    return next((rank for rank, document_id in enumerate(retrieved, start=1) if document_id in expected), None)


def is_hit(retrieved: Sequence[str], expected: Sequence[str], k: int) -> bool:
    rank = first_hit_rank(retrieved, expected)
    return rank is not None and rank <= k


def hit_rate(hits: int, question_count: int) -> float:
    """Hits over ALL questions of the set; an empty result has rate 0.0 rather than undefined."""
    return hits / question_count if question_count else 0.0
