"""The `dense` kind's encoder settings, shared by every kind that embeds a question (dense, pgvector,
qdrant, an http `body_template` with `{vector}`), so a question is embedded exactly as the documents were:
the same model files, pooling, normalisation and query prefix, and the same refusals before anything loads.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Literal

from pydantic import Field

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.retriever import BuildContext, RetrieverParams
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

LOCAL_MODEL_ONLY = ("tokenizer", "runtime", "output", "max_length", "pooling")


class QueryEncoderParams(RetrieverParams):
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


def checked_encoder(
    settings: QueryEncoderParams, identifier: str, context: BuildContext, within: str = ""
) -> EncoderSettings | None:
    """The local model's settings with nothing loaded (None when `encoder` names the model, an encoder
    function imported); `within` is
    the key the settings sit under (`query_encoder.` on the http kind), so a refusal names the right field."""
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
                settings.encoder.resolve(partial(_invalid_within, context, identifier, within))
            return None
        return encoder_settings(
            located(settings.model, "model", context),
            located(settings.tokenizer, "tokenizer", context) if settings.tokenizer else None,
            settings.runtime,
            settings.model if isinstance(settings.model, str) else None,
            **settings.model_dump(include={"max_length", "pooling", "normalize", "batch_size", "output"}),
        )
    except EncoderConfigError as error:
        raise refused(error, identifier, context, within) from None


def opened_encoder(
    settings: QueryEncoderParams, encoding: EncoderSettings | None, identifier: str, context: BuildContext, within: str = ""
) -> Encoder:
    """The model loaded (once per process), or the endpoint or function the `encoder` entry names."""
    if encoding is None:
        invalid = partial(_invalid_within, context, identifier, within)
        return settings.encoder.open(identifier, settings.normalize, settings.batch_size, invalid)
    try:
        return open_encoder(encoding)
    except EncoderConfigError as error:  # a model file the runtime cannot load, an output it lacks
        raise refused(error, identifier, context, within) from None


def refused(error: EncoderConfigError, identifier: str, context: BuildContext, within: str = "") -> InvalidInputError:
    return InvalidInputError(str(error), source=context.source, key=f"retrievers.{identifier}", field=within + error.field)


def located(value: str | PackageFile, field: str, context: BuildContext) -> Path:
    """A path relative to the configuration, or a file of an installed package (see package_files)."""
    if isinstance(value, str):
        return context.resolve(value)
    try:
        return value.locate()
    except FileNotFoundError as error:
        raise EncoderConfigError(field, str(error)) from None


def _invalid_within(
    context: BuildContext, identifier: str, within: str, message: str, field: str | None = None
) -> InvalidInputError:
    return context.invalid(identifier, message, within + field if field else None)
