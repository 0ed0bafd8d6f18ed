"""The one JSON object of `--json`: rows given lazily are written in pieces yet read back as one document."""

from __future__ import annotations

import io
import json

from retrieval_pipeline.cli.render import payloads


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def emitted(monkeypatch, document, stdout: io.StringIO) -> str:
    monkeypatch.setattr("sys.stdout", stdout)
    payloads.emit(document)
    return stdout.getvalue()


def test_rows_written_in_pieces_to_a_pipe_read_back_as_one_json_object(monkeypatch):
    rows = [{"id": f"q{n}", "text": 'naïve "quoted"\nline'} for n in range(2 * payloads.ROWS_PER_WRITE + 7)]
    document = {"set": "s", "questions": iter(rows), "empty": iter([]), "regression": {"summary": "ok"}}

    text = emitted(monkeypatch, document, io.StringIO())

    assert json.loads(text) == {"set": "s", "questions": rows, "empty": [], "regression": {"summary": "ok"}}
    assert text.count("\n") == 1  # compact: one line for a pipe


def test_rows_at_a_terminal_are_indented_like_the_rest(monkeypatch):
    text = emitted(monkeypatch, {"set": "s", "questions": iter([{"id": "q1"}])}, Terminal())

    assert json.loads(text) == {"set": "s", "questions": [{"id": "q1"}]}
    assert '\n  "questions": [\n    {\n      "id": "q1"' in text
