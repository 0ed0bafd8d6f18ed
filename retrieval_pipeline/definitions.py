"""The code location's entry point, kept at this path so `dagster dev` (pyproject.toml, workspace.yaml)
and `dagster dev -m retrieval_pipeline.definitions` load it from any folder; the Dagster layer itself
lives in `retrieval_pipeline.dagster_layer`."""

from retrieval_pipeline.dagster_layer.definitions import defs

__all__ = ["defs"]
