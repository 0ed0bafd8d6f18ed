"""The `dense` kind's encoder settings, shared by every kind that embeds a question (dense, pgvector,
qdrant, an http `body_template` with `{vector}`), so a question is embedded exactly as the documents were:
the same model files, pooling, normalisation and query prefix, and the same refusals before anything loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.kinds import KindContext, KindParams
from retrieval_pipeline.retrievers.encoders import (
    Encoder,
    EncoderConfigError,
    EncoderSettings,
    Pooling,
    encoder_settings,
    open_encoder,
)
from retrieval_pipeline.retrievers.encoders.callable import CallableEncoderParams
from retrieval_pipeline.retrievers.encoders.openai import OpenAIEncoderParams
from retrieval_pipeline.retrievers.encoders.package_files import PackageFile

LOCAL_MODEL_ONLY = ("tokenizer", "runtime", "output", "max_length", "pooling", "providers")


class QueryEncoderParams(KindParams):
    """A local model (`model`, its files and settings) or `encoder` (an endpoint or a function)."""

    model: str | PackageFile | None = None
    encoder: OpenAIEncoderParams | CallableEncoderParams | None = Field(None, discriminator="kind")
    tokenizer: str | PackageFile | None = None
    runtime: Literal["auto", "onnx", "sentence-transformers"] = "auto"
    output: int | str | None = None
    max_length: int = Field(256, ge=1, le=8192)
    pooling: Pooling = "mean"
    normalize: bool = True
    query_prefix: str = ""
    batch_size: int = Field(32, ge=1, le=4096)
    providers: list[str] | None = Field(None, min_length=1)  # onnxruntime's, in order of preference (providers.py)


def checked_encoder(settings: QueryEncoderParams, kind: KindContext) -> EncoderSettings | None:
    """The local model's settings with nothing loaded (None when `encoder` names the model, an encoder
    function imported); `kind` is bound under the key the settings sit under (`query_encoder.` on the
    http kind), so a refusal names the right field."""
    try:
        if (settings.model is None) == (settings.encoder is None):
            raise EncoderConfigError(
                "encoder", "give exactly one of model (a local model) and encoder (an endpoint or a function)"
            )
        if settings.encoder is not None:
            local_only = [name for name in LOCAL_MODEL_ONLY if name in settings.model_fields_set]
            if local_only:
                raise EncoderConfigError(local_only[0], f"{local_only[0]} applies to a local model, not to an encoder")
            if isinstance(settings.encoder, CallableEncoderParams):  # a function that cannot be imported is refused now
                settings.encoder.resolve(kind)
            return None
        return encoder_settings(
            located(settings.model, "model", kind),
            located(settings.tokenizer, "tokenizer", kind) if settings.tokenizer else None,
            settings.runtime,
            settings.model if isinstance(settings.model, str) else None,
            tuple(settings.providers) if settings.providers else None,
            **settings.model_dump(include={"max_length", "pooling", "normalize", "batch_size", "output"}),
        )
    except EncoderConfigError as error:
        raise refused(error, kind) from None


def opened_encoder(settings: QueryEncoderParams, encoding: EncoderSettings | None, kind: KindContext) -> Encoder:
    """The model loaded (once per process), or the endpoint or function the `encoder` entry names."""
    if encoding is None:
        return settings.encoder.open(kind, settings.normalize, settings.batch_size)
    try:
        return open_encoder(encoding)
    except EncoderConfigError as error:  # a model file the runtime cannot load, an output it lacks
        raise refused(error, kind) from None


def refused(error: EncoderConfigError, kind: KindContext) -> InvalidInputError:
    return kind.invalid(str(error), error.field)


def located(value: str | PackageFile, field: str, kind: KindContext) -> Path:
    """A path relative to the configuration, or a file of an installed package (see package_files)."""
    if isinstance(value, str):
        return kind.resolve(value)
    try:
        return value.locate()
    except FileNotFoundError as error:
        raise EncoderConfigError(field, str(error)) from None
