"""Rewriters of the user's own for the `callable` kind's tests: plain rules, clearly no language model."""

from __future__ import annotations

SEEN: list[tuple[list[dict], str]] = []


def opening_and_last(history: list[dict], utterance: str) -> str:
    """The conversation's opening message, then the utterance: enough for an elliptical second turn."""
    SEEN.append((history, utterance))
    return f"{history[0]['content']} {utterance}"


def number(history: list[dict], utterance: str) -> int:
    return 7
