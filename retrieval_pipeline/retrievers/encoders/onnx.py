"""The light runtime: an ONNX export run by onnxruntime, its `tokenizer.json` by tokenizers (no torch).

The tokenizer's own truncation and padding are replaced by `max_length` and pad-to-longest: a
`tokenizer.json` often carries a fixed length of its own (MiniLM's pads and cuts at 128).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from retrieval_pipeline.retrievers.encoders.base import EncoderBase, EncoderConfigError, EncoderSettings


class OnnxEncoder(EncoderBase):
    def __init__(self, settings: EncoderSettings, model_fingerprint: str):
        import onnxruntime
        from tokenizers import Tokenizer

        super().__init__(settings, model_fingerprint)
        self._tokenizer = loaded("tokenizer", str(settings.tokenizer), Tokenizer.from_file)
        padding = self._tokenizer.padding or {}
        self._tokenizer.enable_truncation(settings.max_length)
        self._tokenizer.enable_padding(pad_id=padding.get("pad_id", 0), pad_token=padding.get("pad_token", "[PAD]"))
        self._session = loaded(
            "model", settings.model, lambda path: onnxruntime.InferenceSession(path, providers=list(settings.providers))
        )
        self.providers = tuple(self._session.get_providers())  # those the session runs on, stated in the build report
        self._inputs = {item.name for item in self._session.get_inputs()}
        self._output = _output_name(self._session.get_outputs(), settings.output)

    def encode(self, texts: Sequence[str]):
        """Batches of similar lengths (longest first) pad little; rows come back in the texts' order."""
        import numpy as np

        if not texts:
            return np.empty((0, 0), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        size = self._settings.batch_size
        rows = [self._encode_batch([texts[i] for i in order[start : start + size]]) for start in range(0, len(order), size)]
        vectors = np.empty((len(texts), rows[0].shape[1]), dtype=np.float32)
        vectors[order] = np.concatenate(rows)
        return vectors

    def _encode_batch(self, texts: list[str]):
        import numpy as np

        encodings = self._tokenizer.encode_batch(texts)
        mask = np.array([item.attention_mask for item in encodings], dtype=np.int64)
        feed = {
            "input_ids": np.array([item.ids for item in encodings], dtype=np.int64),
            "attention_mask": mask,
            "token_type_ids": np.array([item.type_ids for item in encodings], dtype=np.int64),
        }
        (output,) = self._session.run([self._output], {name: value for name, value in feed.items() if name in self._inputs})
        output = output.astype(np.float32)
        if output.ndim == 3:  # token vectors: pooled here; a 2-D output is the model's own sentence vector
            if self._settings.pooling == "cls":
                output = output[:, 0]
            else:
                weights = mask[:, :, None].astype(np.float32)
                output = (output * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        if self._settings.normalize:
            output = output / np.maximum(np.linalg.norm(output, axis=1, keepdims=True), 1e-12)
        return np.ascontiguousarray(output, dtype=np.float32)


def loaded(field: str, path: str, load: Callable[[str], Any]) -> Any:
    """A file the runtime cannot read is a configuration error (the libraries raise types of their own)."""
    try:
        return load(path)
    except Exception as error:  # noqa: BLE001
        detail = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise EncoderConfigError(field, f"cannot load {path}: {detail}") from None


def _output_name(outputs: list[Any], chosen: str | int | None) -> str:
    """The output asked for, or by default the first whose declared last dimension is a fixed number: the
    vector width (exports also return masks or token ids, whose dimensions are all symbolic)."""
    names = [item.name for item in outputs]
    if chosen is None:
        vectors = [item.name for item in outputs if len(item.shape) in (2, 3) and isinstance(item.shape[-1], int)]
        if not vectors:
            raise EncoderConfigError("output", f"no output of the model has a fixed vector width; name one of {', '.join(names)}")
        return vectors[0]
    if isinstance(chosen, int):
        if not 0 <= chosen < len(names):
            raise EncoderConfigError("output", f"the model has {len(names)} outputs ({', '.join(names)}), no output {chosen}")
        return names[chosen]
    if chosen not in names:
        raise EncoderConfigError("output", f"the model has no output {chosen!r}; its outputs: {', '.join(names)}")
    return chosen
