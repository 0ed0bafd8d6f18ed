"""A stand-in member for kinds built over other retrievers (fusion, rerank): one fixed ranking for every
question, recording how deep it was asked."""

from __future__ import annotations

from collections.abc import Sequence


class Fixed:
    def __init__(self, identifier: str, ranking: Sequence[str]):
        self.identifier = identifier
        self.ranking = list(ranking)
        self.asked: list[int] = []

    def retrieve(self, question: str, limit: int) -> list[str]:
        self.asked.append(limit)
        return self.ranking[:limit]
