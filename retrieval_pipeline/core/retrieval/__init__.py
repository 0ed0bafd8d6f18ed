"""The retriever contract and kinds registry, and running a set against a retriever (run files included)."""
