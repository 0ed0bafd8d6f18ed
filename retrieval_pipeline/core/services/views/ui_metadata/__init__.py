"""What a person reads in the Dagster UI, as plain values: each asset's and check's metadata, built from
the core's views.

A builder returns a dict in the order the UI lists it. Texts, counts, flags, id lists and floats are
Python values, which Dagster types itself (a Python float stays a float, so a whole number still plots);
a table, Markdown, a link or a JSON document is one of the small values of `values.py`, which the
Dagster layer types (`dagster_layer/metadata.py`), the one place that knows Dagster. Secrets never
reach a builder (a retriever's parameters are redacted), nor a logged query unless its log's entry
says `examples: true`.
"""
