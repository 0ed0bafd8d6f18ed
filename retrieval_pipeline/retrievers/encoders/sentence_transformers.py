"""The heavy runtime, for models that exist only as safetensors: sentence-transformers on the CPU.

The model is assembled from its transformer with this configuration's pooling and length, so `pooling`,
`max_length` and `normalize` mean what they mean for ONNX; nothing is downloaded (the folder is local).
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_pipeline.retrievers.encoders.base import EncoderBase, EncoderSettings


class SentenceTransformersEncoder(EncoderBase):
    def __init__(self, settings: EncoderSettings, model_fingerprint: str):
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

        super().__init__(settings, model_fingerprint)
        transformer = Transformer(settings.model, max_seq_length=settings.max_length)
        pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode=settings.pooling)
        self._model = SentenceTransformer(modules=[transformer, pooling], device="cpu")

    def encode(self, texts: Sequence[str]):
        import numpy as np

        vectors = self._model.encode(
            list(texts),
            batch_size=self._settings.batch_size,
            normalize_embeddings=self._settings.normalize,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(texts), -1)
