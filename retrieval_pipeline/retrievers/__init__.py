"""Built-in retriever kinds, registered through the same entry points as plugins: a folder or module per
kind (`lexical/`, `vector/`: dense, pgvector, qdrant; `http/`, `rerank/`, `fusion.py`, `run_file.py`), beside
what they share (`base/`, `encoders/`)."""
