"""The built-in query-rewriter kinds (`openai`, `callable`), one module each, registered under the entry-point
group `retrieval_pipeline.rewriters`; the contract they fulfil is `core.retrieval.rewriters`."""
