"""A run's per-question rows: their JSON text is the rows' own `json.dumps`, byte for byte."""

from __future__ import annotations

import json

from core_helpers import outcome

from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
from retrieval_pipeline.core.services.views.question_rows import QuestionRows


def test_the_text_of_each_row_is_the_dump_of_its_dict():
    questions = (
        outcome("q1", "1", hard_class="négation", latency_ms=0.1),
        outcome("q2", "E", latency_ms=-0.0),
        outcome('q"3', "3", form="gap"),
        outcome("q4", "-", latency_ms=2.5),
        QuestionResult("q5", "match", None, ("t\\1", "t2"), ("x", "t2", "日本"), 1.0, rejected_document_ids=("x",)),
    )
    rows = QuestionRows(RunResult("demo.set", "fixed", questions))

    dicts = list(rows)
    assert [row["id"] for row in dicts] == ["q1", "q2", 'q"3', "q4", "q5"]
    assert list(rows.json_texts()) == [json.dumps(row, ensure_ascii=False, allow_nan=False) for row in dicts]


def test_rows_at_positions_follow_them():
    run = RunResult("demo.set", "fixed", tuple(outcome(f"q{i}", "13-E"[i % 4]) for i in range(6)))

    rows = QuestionRows(run, [4, 1])

    assert [row["id"] for row in rows] == ["q4", "q1"]
    assert [json.loads(text)["id"] for text in rows.json_texts()] == ["q4", "q1"]
