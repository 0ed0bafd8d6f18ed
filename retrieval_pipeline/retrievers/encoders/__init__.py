"""Texts to vectors behind one small protocol, so every vector kind (dense today, a vector store later)
embeds alike and names its model alike.

What every encoder is and records is `base.py`'s (re-exported here); `encoder_settings` turns
configuration values into frozen settings, refusing what cannot work before anything is loaded (a missing
file, a runtime not installed); `open_encoder` loads the model once per process and per model files. Runtimes are imported only when an encoder is opened. Encoders with no
model files here (an embeddings endpoint, a function: `openai.py`, `callable.py`) name their model by
configuration instead and have their answers checked (`external.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from retrieval_pipeline.core.base.extras import install_command, missing_extra, missing_modules
from retrieval_pipeline.retrievers.base.process_cache import ProcessCache
from retrieval_pipeline.retrievers.encoders.base import (
    Encoder,
    EncoderBase,
    EncoderConfigError,
    EncoderSettings,
    Pooling,
    Runtime,
    checksum_of,
    vector_fingerprint,
)
from retrieval_pipeline.retrievers.encoders.positions import position_limit

EXTRAS: dict[Runtime, tuple[str, tuple[str, ...]]] = {
    "onnx": ("dense", ("onnxruntime", "tokenizers", "numpy")),
    "sentence-transformers": ("sentence-transformers", ("sentence_transformers", "numpy")),
}


def encoder_settings(
    model: Path | str,
    tokenizer: Path | None,
    runtime: Runtime | Literal["auto"],
    hub_name: str | None = None,
    providers: Sequence[str] | None = None,
    **settings,
) -> EncoderSettings:
    """`auto` is ONNX for a `.onnx` file or a folder holding one, else sentence-transformers. Where no
    `model` path exists, `hub_name` (the configured text) may name a model in the local Hugging Face cache.
    `providers` (ONNX only; None: the CPU) are checked against those onnxruntime has here."""
    path = Path(model)
    onnx_files = sorted(path.glob("*.onnx")) if path.is_dir() else [path] if path.exists() else []
    onnx_files = [file for file in onnx_files if file.suffix == ".onnx"]
    chosen = runtime
    if runtime == "auto":
        runtime = "onnx" if onnx_files else "sentence-transformers"
    if chosen == "sentence-transformers":  # named, it is missing whatever the folder holds: only it knows its layouts
        _refuse_missing_runtime(runtime)
    _refuse_absent_model(path, runtime, hub_name if runtime == "sentence-transformers" else None, chosen)
    if runtime == "onnx":  # the files are checked before the runtime: a wrong path is said whatever is installed
        model_file, tokenizer = _onnx_files(model, onnx_files, tokenizer)
    _refuse_missing_runtime(runtime)
    if runtime == "sentence-transformers":
        if providers is not None:
            raise EncoderConfigError("providers", "providers are onnxruntime's: they apply to the onnx runtime only")
        folder = path if path.is_dir() else _cached_model_folder(path, hub_name)
        _refuse_beyond_positions(runtime, folder, settings["max_length"])
        files = tuple(sorted(file for file in folder.rglob("*") if file.is_file() and ".git" not in file.parts))
        return EncoderSettings("sentence-transformers", str(folder), files, None, **settings)
    _refuse_beyond_positions("onnx", model_file, settings["max_length"])
    if providers is not None:
        from retrieval_pipeline.retrievers.encoders.providers import chosen_providers

        settings["providers"] = chosen_providers(providers)
    return EncoderSettings("onnx", str(model_file), (model_file, tokenizer), tokenizer, **settings)


def _refuse_missing_runtime(runtime: Runtime) -> None:
    missing = missing_extra(EXTRAS[runtime][1], EXTRAS[runtime][0])
    if missing:
        raise EncoderConfigError("runtime", missing)


def _onnx_files(model: Path | str, onnx_files: list[Path], tokenizer: Path | None) -> tuple[Path, Path]:
    """The one .onnx file and its tokenizer.json (named, or beside the model)."""
    if len(onnx_files) != 1:
        found = ", ".join(file.name for file in onnx_files) or "no .onnx file"
        raise EncoderConfigError("model", f"{model} must be one .onnx file or a folder holding exactly one (found {found})")
    if tokenizer is None and not (onnx_files[0].parent / "tokenizer.json").is_file():
        raise EncoderConfigError("tokenizer", f"no tokenizer.json beside the model {onnx_files[0]}: name its file with tokenizer")
    tokenizer = tokenizer or onnx_files[0].parent / "tokenizer.json"
    if not tokenizer.is_file():
        raise EncoderConfigError("tokenizer", f"tokenizer file {tokenizer} does not exist")
    return onnx_files[0], tokenizer


def _refuse_absent_model(path: Path, runtime: Runtime, hub_name: str | None, chosen: str) -> None:
    """A path that does not exist, or a folder holding no model, is refused as the `model` it is, not
    taken for a model of a runtime that may not be installed."""
    hub_model = hub_name is not None and path.suffix != ".onnx"
    if not path.exists():
        if hub_model and (chosen == runtime or not missing_modules(EXTRAS[runtime][1])):
            return  # a model name: looked up in the cache, or the runtime asked for installed first
        needs = f" (a Hugging Face model name needs {install_command(EXTRAS[runtime][0])})" if hub_model else ""
        raise EncoderConfigError("model", f"model {path} does not exist{needs}")
    if runtime == "sentence-transformers" and path.is_file():
        raise EncoderConfigError("model", f"model {path} is neither an .onnx file nor a folder")
    if runtime == "sentence-transformers" and not (path / "config.json").is_file():
        holds = "holds no .onnx file and no config.json (a sentence-transformers model)" if any(path.iterdir()) else "is empty"
        raise EncoderConfigError("model", f"model folder {path} {holds}")


def _refuse_beyond_positions(runtime: Runtime, model: Path, max_length: int) -> None:
    limit = position_limit(runtime, model)
    if limit is not None and max_length > limit:
        raise EncoderConfigError(
            "max_length", f"{max_length} exceeds the {limit} token positions of the model {model}: at most {limit}"
        )


def _cached_model_folder(path: Path, name: str | None) -> Path:
    """A model name is looked up in the local Hugging Face cache only: nothing is downloaded at run time."""
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(name, local_files_only=True))
    except Exception as error:  # noqa: BLE001 - not cached, a bad name, a damaged cache: all mean "not here"
        raise EncoderConfigError(
            "model",
            f"model {path} does not exist, nor is {name} a model in the local Hugging Face cache ({type(error).__name__})",
        ) from None


OPEN: ProcessCache[Encoder] = ProcessCache()


def open_encoder(settings: EncoderSettings) -> Encoder:
    """Loaded once per process for the same settings and model bytes: a changed model file loads anew."""
    model_fingerprint = checksum_of(settings.model_files)
    if settings.runtime == "onnx":
        from retrieval_pipeline.retrievers.encoders.onnx import OnnxEncoder as kind
    else:
        from retrieval_pipeline.retrievers.encoders.sentence_transformers import SentenceTransformersEncoder as kind
    return OPEN.get((settings, model_fingerprint), lambda: kind(settings, model_fingerprint))


__all__ = [
    "Encoder",
    "EncoderBase",
    "EncoderConfigError",
    "EncoderSettings",
    "Pooling",
    "Runtime",
    "checksum_of",
    "encoder_settings",
    "open_encoder",
    "vector_fingerprint",
]
