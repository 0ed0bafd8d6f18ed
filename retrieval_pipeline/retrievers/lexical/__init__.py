"""The `lexical` kind: BM25 over a JSONL corpus (`retriever.py`), scored by the fastest backend (`backends.py`)."""
