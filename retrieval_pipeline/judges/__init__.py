"""The built-in machine-judge kinds (`openai`, `rerank`, `callable`), one module each, registered under the
entry-point group `retrieval_pipeline.judges`; the contract they fulfil is `core.retrieval.judges`."""
