"""The built-in question-generator kinds (`openai`, `callable`, `extractive`), one module each, registered
under the entry-point group `retrieval_pipeline.generators`; the contract they fulfil is
`core.retrieval.generators`."""
