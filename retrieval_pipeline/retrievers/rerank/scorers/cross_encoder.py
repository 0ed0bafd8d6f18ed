"""A sentence-transformers `CrossEncoder` loaded from a local model folder: question and document read together.

sentence-transformers (and torch) are the `[rerank]` extra, imported only when a scorer is built, so a
configuration naming this scorer can be checked, and every other kind used, without them. The model is
only ever read from its folder (`local_files_only`): a run never downloads one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import Field

from retrieval_pipeline.core.base.extras import install_command, missing_modules
from retrieval_pipeline.core.retrieval.kinds import KindContext, KindParams

SMALL_FILE_BYTES = 1 << 20


class CrossEncoderParams(KindParams):
    kind: Literal["cross_encoder"]
    model: str = Field(min_length=1, description="a local folder holding the model in sentence-transformers layout")
    max_length: int | None = Field(None, ge=1, description="tokens per question-document pair; null: the model's own")
    batch_size: int = Field(32, ge=1)

    def check(self, kind: KindContext) -> None:
        """Builds nothing: the model folder present and the extra installed."""
        folder = kind.resolve(self.model)
        if not (folder / "config.json").is_file():
            raise kind.invalid(f"no model folder at {folder} (a folder holding config.json)", "scorer.model")
        if missing_modules(("sentence_transformers",)):
            raise kind.invalid(f"the cross_encoder scorer needs sentence-transformers: {install_command('rerank')}", "scorer")

    def build(self, kind: KindContext) -> CrossEncoderScorer:
        return CrossEncoderScorer(self, kind.resolve(self.model))


class CrossEncoderScorer:
    """Scores in-process; torch spreads each batch over the cores itself, so one question at a time."""

    concurrency = 1

    def __init__(self, params: CrossEncoderParams, folder: Path):
        from sentence_transformers import CrossEncoder

        self._params = params
        self._folder = folder
        self._model = CrossEncoder(str(folder), max_length=params.max_length, device="cpu", local_files_only=True)

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        pairs = [(question, text) for text in texts]
        scores = self._model.predict(pairs, batch_size=self._params.batch_size, show_progress_bar=False)
        return [float(score) for score in scores]

    def version(self) -> str:
        """The folder's file names and sizes, and the bytes of its small files (configuration, vocabulary):
        a retrained or swapped model changes it without hashing gigabytes of weights on every run."""
        digest = hashlib.sha256(f"max_length={self._params.max_length}".encode())
        for path in sorted(p for p in self._folder.rglob("*") if p.is_file()):
            size = path.stat().st_size
            digest.update(f"\n{path.relative_to(self._folder)}:{size}".encode())
            if size <= SMALL_FILE_BYTES:
                digest.update(path.read_bytes())
        return f"cross_encoder:{digest.hexdigest()[:16]}"
