"""The calibration sample of a judging file: each (question, document) counts once, so a machine judge's
labels never pass the gate on rows counted twice."""

from __future__ import annotations

import pytest
import yaml

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.labels.calibration import calibrate_file
from retrieval_pipeline.core.services.labels.judging_files import write_judging_file
from retrieval_pipeline.core.services.labels.machine_apply import apply_with_machine
from retrieval_pipeline.core.storage.store import ResultStore

QUESTIONS = 30
JUDGE = "umbrela@abc123"


def _project(tmp_path):
    questions = [
        {"id": f"q{i}", "question": f"question number {i}", "form": "match", "expected_document_ids": [f"q{i}-r0"]}
        for i in range(QUESTIONS)
    ]
    set_file = tmp_path / "pool.yaml"
    set_file.write_text(yaml.safe_dump({"identifier": "pool.set", "name": "Pool set", "questions": questions}), encoding="utf-8")
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"store": "results", "question_sets": [{"file": "pool.yaml"}]}), encoding="utf-8")
    return set_file, load_config(config)


def _row(i: int, document: str, human: str, machine: str) -> dict:
    return {
        "question_id": f"q{i}",
        "document_id": document,
        "judgement": human,
        "question": f"question number {i}",
        "machine_judgement": machine,
        "machine_grade": "3" if machine == "yes" else "0",
        "judged_by": JUDGE,
    }


def _rows_answered_by_both() -> list[dict]:
    """30 rows a person and the machine both answered, agreeing on all but three: well calibrated, but
    on fewer rows than the gate's 50."""
    rows = []
    for i in range(QUESTIONS):
        human = "yes" if i % 3 == 0 else "no"
        machine = human if i >= 3 else {"yes": "no", "no": "yes"}[human]
        rows.append(_row(i, f"q{i}-n1", human, machine))
    return rows


def test_a_duplicated_row_cannot_carry_machine_labels_over_the_calibration_gate(tmp_path):
    set_file, config = _project(tmp_path)
    answered = _rows_answered_by_both()
    machine_only = [_row(i, f"q{i}-n2", "", "yes") for i in range(QUESTIONS)]
    path = write_judging_file([*answered, *machine_only, *answered], tmp_path / "judged.csv")  # rows 2-31 again at 62-91
    before = set_file.read_bytes()

    with pytest.raises(InvalidInputError) as caught:
        apply_with_machine(path, set_file, config)

    assert caught.value.source == f"{path}:62"
    assert "question 'q0', document 'q0-n1'" in caught.value.problem and f"{path}:2" in caught.value.problem
    assert set_file.read_bytes() == before


def test_calibrating_a_file_with_a_duplicated_row_names_the_row_and_the_pair(tmp_path):
    set_file, config = _project(tmp_path)
    rows = _rows_answered_by_both()
    path = write_judging_file([*rows, rows[4]], tmp_path / "judged.jsonl")
    with pytest.raises(InvalidInputError) as caught:
        calibrate_file(path, 0.2, config, ResultStore(str(tmp_path / "results")), None)
    assert caught.value.source == f"{path}:{QUESTIONS + 1}"
    assert "question 'q4', document 'q4-n1'" in caught.value.problem


def test_the_same_rows_once_each_are_refused_by_the_gate_for_want_of_rows(tmp_path):
    set_file, config = _project(tmp_path)
    rows = [*_rows_answered_by_both(), *(_row(i, f"q{i}-n2", "", "yes") for i in range(QUESTIONS))]
    path = write_judging_file(rows, tmp_path / "judged.csv")
    with pytest.raises(InvalidInputError, match="n=30 rows with both answers"):
        apply_with_machine(path, set_file, config)


@pytest.mark.parametrize("line", ["[" * 100_000 + "]" * 100_000, '{"question_id": ' + "9" * 5000 + "}"], ids=["nested", "digits"])
def test_a_judging_file_line_nested_thousands_deep_is_refused_naming_its_line(tmp_path, line):
    set_file, config = _project(tmp_path)
    path = write_judging_file(_rows_answered_by_both(), tmp_path / "judged.jsonl")
    path.write_text(path.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="invalid JSON") as caught:
        calibrate_file(path, 0.2, config, ResultStore(str(tmp_path / "results")), None)
    assert caught.value.source == f"{path}:{QUESTIONS + 1}"
