"""Kinds that rank by vectors: `dense` (a corpus encoded here, searched exactly), and the stores that hold
vectors already, `pgvector` and `qdrant` (`store.py`: what they share); the document-vector cache beside them."""
