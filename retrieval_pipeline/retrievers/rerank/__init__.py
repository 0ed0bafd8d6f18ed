"""The `rerank` kind (`retriever.py`) and the scorers it rescores with (`scorers/`)."""
