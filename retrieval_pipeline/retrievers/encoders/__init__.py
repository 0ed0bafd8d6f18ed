"""Texts to vectors behind one small protocol, so every vector kind (dense today, a vector store later)
embeds alike and names its model alike.

`encoder_settings` turns configuration values into frozen settings, refusing what cannot work before
anything is loaded (a missing file, a runtime not installed); `open_encoder` loads the model once per
process and per model files. Runtimes are imported only when an encoder is opened.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    import numpy

Runtime = Literal["onnx", "sentence-transformers"]
Pooling = Literal["mean", "cls"]
EXTRAS: dict[Runtime, tuple[str, tuple[str, ...]]] = {
    "onnx": ("dense", ("onnxruntime", "tokenizers", "numpy")),
    "sentence-transformers": ("sentence-transformers", ("sentence_transformers", "numpy")),
}


class Encoder(Protocol):
    """`encode` gives one float32 row per text; `fingerprint` names everything that changes those rows."""

    runtime: Runtime
    model_fingerprint: str  # the model files' checksums
    fingerprint: str  # the model files and the settings that change a vector (not the batch size)

    def encode(self, texts: Sequence[str]) -> numpy.ndarray: ...


class EncoderBase:
    """What every runtime's encoder records of its settings; a runtime adds its model and `encode`."""

    def __init__(self, settings: EncoderSettings, model_fingerprint: str):
        self.runtime = settings.runtime
        self.model_fingerprint = model_fingerprint
        self.fingerprint = vector_fingerprint(settings, model_fingerprint)
        self._settings = settings


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


def encoder_settings(
    model: Path | str, tokenizer: Path | None, runtime: Runtime | Literal["auto"], **settings
) -> EncoderSettings:
    """`auto` is ONNX for a `.onnx` file or a folder holding one, else sentence-transformers."""
    path = Path(model) if Path(model).exists() else None
    onnx_files = sorted(path.glob("*.onnx")) if path is not None and path.is_dir() else [path] if path else []
    onnx_files = [file for file in onnx_files if file.suffix == ".onnx"]
    if runtime == "auto":
        runtime = "onnx" if onnx_files else "sentence-transformers"
    missing = [module for module in EXTRAS[runtime][1] if importlib.util.find_spec(module) is None]
    if missing:
        raise EncoderConfigError(
            "runtime", f"{', '.join(missing)} not installed: pip install 'retrieval-pipeline[{EXTRAS[runtime][0]}]'"
        )
    if runtime == "sentence-transformers":
        folder = path if path is not None and path.is_dir() else _cached_model_folder(str(model))
        files = tuple(sorted(file for file in folder.rglob("*") if file.is_file() and ".git" not in file.parts))
        return EncoderSettings("sentence-transformers", str(folder), files, None, **settings)
    if len(onnx_files) != 1:
        found = ", ".join(file.name for file in onnx_files) or "no .onnx file"
        raise EncoderConfigError("model", f"{model} must be one .onnx file or a folder holding exactly one (found {found})")
    tokenizer = tokenizer or onnx_files[0].parent / "tokenizer.json"
    if not tokenizer.is_file():
        raise EncoderConfigError("tokenizer", f"tokenizer file {tokenizer} does not exist")
    return EncoderSettings("onnx", str(onnx_files[0]), (onnx_files[0], tokenizer), tokenizer, **settings)


def _cached_model_folder(name: str) -> Path:
    """A model name is looked up in the local Hugging Face cache only: nothing is downloaded at run time."""
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(name, local_files_only=True))
    except Exception as error:  # noqa: BLE001 - not cached, a bad name, a damaged cache: all mean "not here"
        raise EncoderConfigError(
            "model", f"{name} is neither a folder nor a model in the local Hugging Face cache ({type(error).__name__})"
        ) from None


def checksum_of(files: Sequence[Path], **recipe) -> str:
    """One short checksum over files' contents and a recipe of settings."""
    from retrieval_pipeline.core.base.durable import file_sha256

    named = {"files": [file_sha256(file) for file in files], **recipe}
    return hashlib.sha256(json.dumps(named, sort_keys=True, default=str).encode()).hexdigest()[:16]


_OPEN: dict[tuple[EncoderSettings, str], Encoder] = {}
_LOCK = threading.Lock()


def open_encoder(settings: EncoderSettings) -> Encoder:
    """Loaded once per process for the same settings and model bytes: a changed model file loads anew."""
    with _LOCK:
        model_fingerprint = checksum_of(settings.model_files)
        key = (settings, model_fingerprint)
        if key not in _OPEN:
            if settings.runtime == "onnx":
                from retrieval_pipeline.retrievers.encoders.onnx import OnnxEncoder as kind
            else:
                from retrieval_pipeline.retrievers.encoders.sentence_transformers import SentenceTransformersEncoder as kind
            _OPEN[key] = kind(settings, model_fingerprint)
        return _OPEN[key]


def vector_fingerprint(settings: EncoderSettings, model_fingerprint: str) -> str:
    """Everything that changes a vector: the model's bytes and the settings, not the batch size."""
    recipe = {"runtime": settings.runtime, "max_length": settings.max_length, "pooling": settings.pooling}
    return checksum_of((), model=model_fingerprint, normalize=settings.normalize, output=settings.output, **recipe)
