"""New questions appended to a set file keep its format and layout; a refused addition writes nothing."""

from __future__ import annotations

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.question_file_writer import dump_question_set
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet
from retrieval_pipeline.core.golden.set_file_additions import add_questions_to_set_file

SET = GoldenQuestionSet(
    identifier="desk.small",
    name="Desk",
    questions=[GoldenQuestion(id="q1", question="how do I reset my password", form="gap", expected_document_ids=["kb-1"])],
)
NEW = GoldenQuestion(
    id="new-0a1b2c3d4e5f",
    question="gift card balance",
    form="match",
    expected_document_ids=["kb-9"],
    rejected_document_ids=["kb-2"],
    source_log="site",
    source_traffic=412,
)


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
def test_a_new_question_is_appended_and_every_earlier_byte_is_kept(tmp_path, suffix):
    path = tmp_path / f"set{suffix}"
    text = dump_question_set(SET, suffix)
    path.write_text(text)
    add_questions_to_set_file(path, [NEW])
    assert load_question_set_file(path).questions == (*SET.questions, NEW)
    if suffix != ".json":
        assert path.read_text().startswith(text)


def test_yaml_questions_before_other_keys_and_indented_get_the_new_entry_in_their_list(tmp_path):
    path = tmp_path / "set.yaml"
    path.write_text(
        "questions:\n  - id: q1  # first\n    question: how do I reset my password\n    form: gap\n"
        "    expected_document_ids: [kb-1]\n\nidentifier: desk.small\nname: Desk\n"
    )
    add_questions_to_set_file(path, [NEW])
    assert load_question_set_file(path).questions == (*SET.questions, NEW)
    assert "# first" in path.read_text()


def test_a_question_id_already_in_the_set_is_refused_and_the_file_untouched(tmp_path):
    path = tmp_path / "set.yaml"
    path.write_text(dump_question_set(SET, ".yaml"))
    before = path.read_bytes()
    with pytest.raises(InvalidInputError, match="'q1' is in the set already"):
        add_questions_to_set_file(path, [NEW.model_copy(update={"id": "q1"})])
    assert path.read_bytes() == before
