"""Stored runs of one set and two retrievers, for the charts drawn from a result store."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
from retrieval_pipeline.core.storage.store import ResultStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))  # `conversation_helpers`: runs of conversations

START = datetime(2026, 11, 1, tzinfo=timezone.utc)


def run(retriever: str, hits: str, day: int) -> RunResult:
    """One question per character: 1 = top-1 hit, 3 = top-3 hit, - = miss, E = retriever error."""
    ranking = {"1": ("t",), "3": ("x", "y", "t"), "-": ("x",), "E": ()}
    questions = tuple(
        QuestionResult(f"q{i}", "match", None, ("t",), ranking[code], 1.0, "down" if code == "E" else None)
        for i, code in enumerate(hits)
    )
    return RunResult("demo.set", retriever, questions, run_at=START + timedelta(days=day))


@pytest.fixture
def store(tmp_path):
    store = ResultStore(str(tmp_path / "results"))
    for day, hits in enumerate(["1133", "113-", "1E33", "----", "1133"]):
        store.save(run("bm25", hits, day))
    store.save(run("dense", "1113", 0))
    return store
