"""The framework-free domain: nothing under this package imports Dagster (a test enforces it)."""
