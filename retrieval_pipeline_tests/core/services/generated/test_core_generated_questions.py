"""Which generated candidates `judge apply` adds: those whose source document a person, or a calibrated
machine judge under --machine, said yes to; a machine's labels stay in the machine lists."""

from __future__ import annotations

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.services.generated.questions import confirmed_candidates
from retrieval_pipeline.core.services.labels.judging_files import is_candidate_row

PROVENANCE = {"generated_by": "extractive@abc", "generated_from": "document", "asked_form": "match", "form": "match"}


def rows(question_id: str, source: str, answers: dict[str, tuple[str, str]]) -> list[tuple[str, dict]]:
    """(where, row) for each document: its (person's, machine's) answer; the source document first."""
    return [
        (
            f"gen.csv:{line}",
            {
                **PROVENANCE,
                "question_id": question_id,
                "question": "wing lift slipstream",
                "source_document_id": source,
                "document_id": document,
                "judgement": human,
                "machine_judgement": machine,
            },
        )
        for line, (document, (human, machine)) in enumerate(answers.items(), start=2)
    ]


def test_a_persons_yes_on_the_source_adds_the_candidate_with_its_other_answers():
    found = confirmed_candidates(rows("gen-1", "d1", {"d1": ("yes", ""), "d2": ("yes", ""), "d3": ("no", "yes")}), False, {})

    (question,) = found.questions
    assert (question.expected_document_ids, question.rejected_document_ids) == (("d1", "d2"), ("d3",))
    assert question.machine_expected_document_ids == () and question.generated.document_id == "d1"
    assert (found.by_machine, found.refused, found.unjudged) == (0, 0, 0)


def test_a_source_judged_no_is_not_added_and_one_nobody_judged_waits():
    judged = rows("gen-1", "d1", {"d1": ("no", ""), "d2": ("yes", "")}) + rows("gen-2", "d5", {"d5": ("", "yes")})

    found = confirmed_candidates(judged, False, {})

    assert (found.questions, found.refused, found.unjudged) == ((), 1, 1)


def test_a_machine_yes_confirms_only_with_machine_and_its_labels_stay_the_machines():
    judged = rows("gen-2", "d5", {"d5": ("", "yes"), "d6": ("no", "yes"), "d7": ("", "no")})

    found = confirmed_candidates(judged, True, {})

    (question,) = found.questions
    assert question.expected_document_ids == () and question.rejected_document_ids == ("d6",)
    assert (question.machine_expected_document_ids, question.machine_rejected_document_ids) == (("d5",), ("d7",))
    assert found.by_machine == 1 and found.machine_labelled


def test_a_candidates_row_is_one_that_names_its_generator_and_is_not_a_set_question():
    (_, row), *_ = rows("gen-1", "d1", {"d1": ("yes", "")})

    assert is_candidate_row(row, {"q1"}) and not is_candidate_row(row, {"gen-1"})
    assert not is_candidate_row({**row, "generated_by": ""}, {"q1"})


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"generated_from": "query"}, r"gen\.csv:2: generated question 'gen-1': the source is one of cluster, document"),
        ({"form": "paraphrase"}, r"gen\.csv:2.*generated question 'gen-1': 'paraphrase' is not a form"),
    ],
)
def test_a_bad_candidate_row_is_refused_naming_the_line_and_the_question(change, problem):
    (where, row), *_ = rows("gen-1", "d1", {"d1": ("yes", "")})

    with pytest.raises(InvalidInputError, match=problem):
        confirmed_candidates([(where, {**row, **change})], False, {})


def test_two_answers_that_disagree_on_one_document_are_refused():
    judged = rows("gen-1", "d1", {"d1": ("yes", "")}) + rows("gen-1", "d1", {"d1": ("no", "")})

    with pytest.raises(InvalidInputError, match="conflicting answers for question 'gen-1', document 'd1'"):
        confirmed_candidates(judged, False, {})
