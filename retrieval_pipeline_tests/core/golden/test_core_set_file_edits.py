"""Relabelling a YAML set file in place: a diff of the file shows the new ids and nothing else."""

from __future__ import annotations

import difflib

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.golden.set_file_edits import relabel_set_file

LONG_SET = """\
# Support desk, labelled by hand.
identifier: desk.long
name: 'Desk: long questions'
description: >-
  Questions as customers wrote them, folded
  at eighty columns by the editor.
questions:
  - id: q1
    question: how do I reset my password when the reset mail never arrives and the
      support chat is closed for the weekend
    form: match
    expected_document_ids: ['kb-1']  # the reset page
  - id: "q2"
    question: "where are the invoices of last year kept, and can I download them
      all at once as one archive?"
    form: gap
    expected_document_ids:
      - kb-2
      - kb-3   # the archive page
    rejected_document_ids: [kb-9]
  - id: q3
    form: gap
    question: can I pay in bitcoin
    expected_document_ids: []
  - {id: q4, question: 'is there a dark mode, and where is it?', form: match, expected_document_ids: [kb-4]}
  - id: q5
    question: an untouched question whose text is long enough to be folded by a dumper
      that wraps at eighty
    form: match
    expected_document_ids: [kb-5]
  - id: q6
    question: what is the refund policy
    form: match
    expected_document_ids:
    - kb-6
"""


def diff_lines(before: str, after: str) -> list[str]:
    """The removed (-) and added (+) lines of a zero-context unified diff."""
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), n=0, lineterm="")
    return [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_a_yaml_set_keeps_its_folding_quoting_order_and_comments_and_only_the_new_ids_appear(tmp_path):
    path = tmp_path / "desk.yaml"
    path.write_text(LONG_SET, encoding="utf-8")
    labels = {
        "q1": (("kb-1", "kb-7"), ("kb-8",)),  # no rejected ids yet
        "q2": (("kb-2", "kb-3", "123"), ("kb-9", "kb-10")),  # a block list; an id YAML would read as a number
        "q3": (("kb-11",), ()),  # was an empty-label question
        "q4": (("kb-4",), ("yes",)),  # a flow mapping; an id YAML would read as true
        "q6": (("kb-6", "kb-12"), ("kb-13",)),  # both lists grow at the end of the file
    }

    relabel_set_file(path, labels)

    after = path.read_text(encoding="utf-8")
    assert diff_lines(LONG_SET, after) == [
        "-    expected_document_ids: ['kb-1']  # the reset page",
        "+    expected_document_ids: ['kb-1', kb-7]  # the reset page",
        "+    rejected_document_ids: [kb-8]",
        "-    rejected_document_ids: [kb-9]",
        '+      - "123"',
        "+    rejected_document_ids: [kb-9, kb-10]",
        "-    expected_document_ids: []",
        "-  - {id: q4, question: 'is there a dark mode, and where is it?', form: match, expected_document_ids: [kb-4]}",
        "+    expected_document_ids: [kb-11]",
        "+  - {id: q4, question: 'is there a dark mode, and where is it?', form: match, expected_document_ids: [kb-4], "
        'rejected_document_ids: ["yes"]}',
        "+    - kb-12",
        "+    rejected_document_ids: [kb-13]",
    ]
    hunks = [line for line in difflib.unified_diff(LONG_SET.splitlines(), after.splitlines(), n=0) if line.startswith("@@")]
    assert len(hunks) == 4  # q1; q2; q3 and q4, adjacent; q6: q5 and every folded line untouched
    relabelled = load_question_set_file(path)
    assert {q.id: (q.expected_document_ids, q.rejected_document_ids) for q in relabelled.questions} == {
        **labels,
        "q5": (("kb-5",), ()),
    }
    crlf = tmp_path / "crlf.yaml"
    crlf.write_bytes(LONG_SET.replace("\n", "\r\n").encode())
    relabel_set_file(crlf, labels)
    assert crlf.read_bytes() == after.replace("\n", "\r\n").encode()  # Windows line ends stay Windows line ends


def test_a_yaml_list_shared_through_an_alias_is_refused_and_the_file_left_as_it_was(tmp_path):
    path = tmp_path / "desk.yaml"
    text = LONG_SET.replace("expected_document_ids: [kb-5]", "expected_document_ids: *reset").replace(
        "expected_document_ids: ['kb-1']", "expected_document_ids: &reset ['kb-1']"
    )
    path.write_text(text, encoding="utf-8")

    with pytest.raises(InvalidInputError, match="does not let the labels be edited in place"):
        relabel_set_file(path, {"q1": (("kb-1", "kb-7"), ())})

    assert path.read_text(encoding="utf-8") == text
