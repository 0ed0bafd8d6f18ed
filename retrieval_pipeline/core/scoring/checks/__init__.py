"""Checks of a run: tolerances and gates, regression against a baseline, the verdict, and retrievers
compared side by side with where a change sits."""
