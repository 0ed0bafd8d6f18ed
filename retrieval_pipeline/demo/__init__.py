"""The embedded demo, used when no configuration is given.

`config.yaml` here measures three BM25 variants against the golden set `demo.cranfield`
(`demo.cranfield.yaml`) over the public Cranfield aeronautics abstracts (`cranfield-corpus.jsonl.gz`).
It is a demonstration of the tool, clearly not a golden set for anyone's corpus: labels only mean
something against the corpus they were made for. `scripts/build_demo.py` rebuilds the data files and
documents their rules; `README.md` here summarises them.
"""
