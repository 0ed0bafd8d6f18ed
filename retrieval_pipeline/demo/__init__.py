"""The embedded demo, used when no configuration is given.

`config.yaml` here measures three BM25 variants against the golden set `demo.cranfield`
(`demo.cranfield.yaml`) over the public Cranfield aeronautics abstracts (`cranfield-corpus.jsonl.gz`), and
BM25 asking the conversations of `demo.conversations` (`demo.conversations.yaml`, written for the demo) as
typed, with history and by their rewrites. It is a demonstration of the tool, clearly not a golden set
for anyone's corpus: labels only mean something against the corpus they were made for.
`scripts/build_demo.py` and `scripts/build_demo_conversations.py` rebuild the data files and document
their rules; `README.md` here summarises them.
"""
