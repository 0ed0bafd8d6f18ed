"""The presentation model: an evaluation and a comparison as the rows every output shows.

The terminal, the JSON documents, the Markdown and HTML reports and the Dagster metadata all lay out
these views and compute nothing of their own, so a figure reads the same everywhere and a measure
declared in `scoring/measures.py` appears in every output with no other edit. Every text comes from
`base/formatting.py` or the measure's own declaration.
"""
