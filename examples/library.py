"""The library face (docs/library.md): the command line's `run` and `compare` from Python, on the embedded
demo. retrieval_pipeline_tests/core/services/test_core_library.py runs this file as it ships."""

import tempfile

import retrieval_pipeline
from retrieval_pipeline.core.services.configuration.lookup import demo_config_path

config = demo_config_path()  # the embedded demo; name your own retrieval-eval.yaml here

# One run, neither saved nor judged against a baseline: the figures `retrieval-eval run` shows.
view = retrieval_pipeline.evaluate("demo.cranfield", "bm25_stemmed", config=config)
document = view.to_dict()  # the document `retrieval-eval run --json` prints
print(f"top-1 {document['hit_rates']['1']['hit_rate']:.3f}, MRR@10 {document['metrics']['mrr@10']:.3f}")
print(view.to_markdown())  # the summary `run --markdown` writes for a CI job

# With a store, each run is saved and judged against the one before it, as `retrieval-eval run` does.
with tempfile.TemporaryDirectory() as store:
    retrieval_pipeline.evaluate("demo.cranfield", "bm25_stemmed", config=config, store=store)
    again = retrieval_pipeline.evaluate("demo.cranfield", "bm25_stemmed", config=config, store=store)
    print(again.verdict.label, again.verdict.sentence)

# Retrievers side by side, the first the reference, with paired tests: `retrieval-eval compare`.
comparison = retrieval_pipeline.compare("demo.cranfield", ["bm25_stemmed", "bm25_plain"], config=config)
print(comparison.to_markdown())
