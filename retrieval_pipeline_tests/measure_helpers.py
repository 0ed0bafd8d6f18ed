"""Throwaway measures for the tests that show a declaration alone reaches every output (the CLI's, the
reports', Dagster's): the measures are declared for one test only, and every reader asks at call time."""

from __future__ import annotations

from retrieval_pipeline.core.scoring import measures
from retrieval_pipeline.core.scoring.measures import Measure, measure_registry


def half_credit(ranked, k):
    """0.5 for a question with a relevant document in its top k, else 0."""
    return ranked.relevant[:, :k].any(axis=1) * 0.5


def throwaway_measure(name: str = "throwaway", **declaration) -> Measure:
    return Measure(name, name.capitalize(), score=half_credit, **declaration)


def declare(monkeypatch, *extra: Measure) -> None:
    """The built-in measures, then `extra`, for the current test."""
    monkeypatch.setattr(measures, "MEASURES", measure_registry((*measures.MEASURES.values(), *extra)))
