"""How `kind: rerank` rescores the first stage's documents: one small module per scorer.

A scorer answers `score(question, texts)` with one relevance per text (larger: more relevant), and
`version()`, which changes when its model does, so a new model re-evaluates the rerank like a rebuilt index.
"""
