"""What an approximate search says of itself in a run: which index and parameters, and how far its top 10
agrees with exact search over the same vectors on a sample of the run's own questions.

An approximate index (HNSW) trades recall for speed; a hit rate measured through it is a figure of the
index as much as of the model. So a run through one is never reported as if exact: the run records this
statement and every report prints its `sentence`. Exact runs record none, so their outputs are unchanged.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

OVERLAP_DEPTH = 10
"""The overlap is measured on the top 10: the depth of every cut-off the reports show by default."""


@dataclass(frozen=True)
class Approximation:
    """`index` names the index and its parameters ("hnsw M=16 ef_construction=128 ef=64"); `overlap` is the
    mean share of exact search's top `depth` found in the index's top `depth`, over `questions` sampled
    questions (None, with `questions` 0, when it could not be measured: the statement still says approximate)."""

    index: str
    overlap: float | None
    questions: int
    depth: int = OVERLAP_DEPTH

    def __post_init__(self) -> None:
        if not self.index:
            raise ValueError("an approximation names its index")
        if self.overlap is not None and not 0.0 <= self.overlap <= 1.0:
            raise ValueError(f"an overlap is a share between 0 and 1, not {self.overlap}")
        if self.questions < 0 or self.depth < 1 or (self.overlap is None) != (self.questions == 0):
            raise ValueError(f"an overlap over {self.questions} questions at depth {self.depth} cannot be {self.overlap}")

    @property
    def sentence(self) -> str:
        """ "approximate: hnsw M=16 ef_construction=128 ef=64; top-10 overlap with exact 0.97 on 50 questions"."""
        if self.overlap is None:
            return f"approximate: {self.index}; top-{self.depth} overlap with exact not measured"
        noun = "question" if self.questions == 1 else "questions"
        return f"approximate: {self.index}; top-{self.depth} overlap with exact {self.overlap:.2f} on {self.questions} {noun}"

    def to_dict(self) -> dict[str, str | float | int | None]:
        """The JSON document's `approximate` entry: the figures, and the sentence every report prints."""
        return {**asdict(self), "statement": self.sentence}

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Approximation | None:
        """A stored run's statement; None for an exact run, or one stored before statements existed."""
        return None if not text else cls(**json.loads(text))
