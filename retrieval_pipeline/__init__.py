"""Retrieval-quality evaluation: golden question sets, top-k document hit rates, history, regressions."""
