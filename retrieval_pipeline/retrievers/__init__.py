"""Built-in retriever kinds, one adapter per file, registered through the same entry points as plugins."""
