"""What every encoder is and records, apart from any runtime: the `Encoder` protocol, the settings of a
local model, and the fingerprints naming everything that changes a vector. The runtimes (`onnx.py`,
`sentence_transformers.py`) build on it; the package's `open_encoder` picks one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    import numpy

Runtime = Literal["onnx", "sentence-transformers"]
Pooling = Literal["mean", "cls"]


class Encoder(Protocol):
    """`encode` gives one float32 row per text; `fingerprint` names everything that changes those rows."""

    runtime: str  # a Runtime, or "openai" / "callable" for the encoders configured by `encoder`
    model_fingerprint: str  # the model files' checksums, or the configured model identity
    fingerprint: str  # the model files and the settings that change a vector (not the batch size)
    concurrency: int  # batches `encode` works on at once (requests in flight for an endpoint)

    def encode(self, texts: Sequence[str]) -> numpy.ndarray: ...

    def dimension(self) -> int | None:
        """The vectors' width when known without asking a service (None: known at its first answer)."""


class EncoderBase:
    """What every runtime's encoder records of its settings; a runtime adds its model and `encode`."""

    concurrency = 1  # the runtimes use every core on one batch

    def __init__(self, settings: EncoderSettings, model_fingerprint: str):
        self.runtime = settings.runtime
        self.model_fingerprint = model_fingerprint
        self.fingerprint = vector_fingerprint(settings, model_fingerprint)
        self._settings = settings

    def dimension(self) -> int:
        """A local model's width, from one short text (milliseconds, asked when cached vectors are loaded):
        what those vectors must match."""
        return int(self.encode(["width"]).shape[1])


class EncoderConfigError(ValueError):
    """A setting that cannot work, with the configuration field it comes from."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class EncoderSettings:
    runtime: Runtime
    model: str  # the .onnx file, or the sentence-transformers folder (a model name is resolved to its cache folder)
    model_files: tuple[Path, ...]  # the files the model fingerprint covers
    tokenizer: Path | None
    max_length: int
    pooling: Pooling
    normalize: bool
    batch_size: int
    output: str | int | None = None  # ONNX only: which output holds the token (3-D) or sentence (2-D) vectors
    providers: tuple[str, ...] = ("CPUExecutionProvider",)  # ONNX only: onnxruntime's, those available (providers.py)


def checksum_of(files: Sequence[Path], **recipe) -> str:
    """One short checksum over files' contents and a recipe of settings."""
    from retrieval_pipeline.core.base.durable import file_sha256

    named = {"files": [file_sha256(file) for file in files], **recipe}
    return hashlib.sha256(json.dumps(named, sort_keys=True, default=str).encode()).hexdigest()[:16]


def vector_fingerprint(settings: EncoderSettings, model_fingerprint: str) -> str:
    """Everything that changes a vector: the model's bytes and the settings, not the batch size."""
    recipe = {"runtime": settings.runtime, "max_length": settings.max_length, "pooling": settings.pooling}
    return checksum_of((), model=model_fingerprint, normalize=settings.normalize, output=settings.output, **recipe)
