"""The services combine the layers below (sets, retrieval, scoring, storage) into what a user asks for,
one package per concept: `configuration`, `evaluation` (and its verdicts), `labels` (judging),
`traffic` (coverage), `generated` (generated questions) and `views` (what every output lays out).
Each package builds only on the ones before it in that order: `configuration`, `labels`, `traffic`,
`generated`, `evaluation`, `views`. `library.py`, the library face (`retrieval_pipeline.evaluate` and
`compare`), sits on top of them all.
"""
