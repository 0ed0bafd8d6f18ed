"""Writing a golden set to a file that loads back as the same set, atomically."""

from __future__ import annotations

import os

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.question_file_writer import write_question_set_file
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet

SET = GoldenQuestionSet(
    identifier="demo.written",
    name="Written set",
    description="Ünïcode survives: Grüße",
    questions=(
        GoldenQuestion(
            id="q1", question="How do wings lift?", form="match", expected_document_ids=("d1", "d2"), hard_class="normal"
        ),
        GoldenQuestion(id="q2", question="Why planes fly", form="gap", expected_document_ids=(), answer_gist="Bernoulli, mostly"),
    ),
)


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".json", ".jsonl"])
def test_a_written_set_loads_back_as_the_same_set(tmp_path, suffix):
    path = write_question_set_file(SET, tmp_path / "sets" / f"written{suffix}")
    assert load_question_set_file(path) == SET
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_an_existing_file_is_only_replaced_when_asked(tmp_path):
    path = tmp_path / "set.yaml"
    path.write_text("keep me", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="already exists"):
        write_question_set_file(SET, path)
    assert path.read_text(encoding="utf-8") == "keep me"
    write_question_set_file(SET, path, overwrite=True)
    assert load_question_set_file(path) == SET


def test_an_unsupported_suffix_is_refused(tmp_path):
    with pytest.raises(InvalidInputError, match="unsupported"):
        write_question_set_file(SET, tmp_path / "set.csv")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_neither_a_partial_file_nor_a_damaged_original(tmp_path, monkeypatch):
    path = tmp_path / "set.json"
    write_question_set_file(SET, path)
    before = path.read_bytes()

    def failing_replace(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(InvalidInputError, match="No space left"):
        write_question_set_file(SET, path, overwrite=True)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["set.json"]
