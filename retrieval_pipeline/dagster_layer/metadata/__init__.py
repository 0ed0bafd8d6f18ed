"""What a person reads in the Dagster UI: each asset's and check's metadata, built here from the core's
views, as the CLI lays out the same views as tables.

A builder returns a dict in the order the UI lists it. Texts, counts, flags, id lists and floats are
Python values, which Dagster types itself (a Python float stays a float, so a whole number still plots);
a table, Markdown, a link or a JSON document is one of the small values of `values.py`, which `typed`
turns into its `MetadataValue`, so a builder reads, and is tested, as plain values. The metadata that
carries a chart is drawn in `charted.py`. Secrets never reach a builder (a retriever's parameters are
redacted), nor a logged query unless its log's entry says `examples: true`.
"""
