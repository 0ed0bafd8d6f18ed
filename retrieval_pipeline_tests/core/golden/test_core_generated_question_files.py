"""A question marked generated and a set's record that its generated questions count: kept through every
set file format, validated naming what is wrong, and never part of a question's fingerprint."""

from __future__ import annotations

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.generated import GeneratedProvenance
from retrieval_pipeline.core.golden.question_file_writer import write_question_set_file
from retrieval_pipeline.core.golden.question_files import load_question_set_file, question_set_from_mapping
from retrieval_pipeline.core.golden.questions import GeneratedQuestionsCounted, GoldenQuestion, GoldenQuestionSet
from retrieval_pipeline.core.services.evaluation.runner import run_question_set

PROVENANCE = GeneratedProvenance(generated_by="extractive@8f1e17cf342a", source="document", document_id="d2", asked_form="match")
HUMAN = GoldenQuestion(id="q1", question="How do wings lift?", form="match", expected_document_ids=("d1",))
GENERATED = GoldenQuestion(
    id="gen-1", question="wing lift slipstream", form="match", expected_document_ids=("d2",), generated=PROVENANCE
)
COUNTED = GeneratedQuestionsCounted(
    because="person", tau_low={"top1": 0.2, "top3": None}, threshold=0.8, questions=1, by="Ada", at="2026-12-03T16:00:00+00:00"
)
SET = GoldenQuestionSet(identifier="demo.grown", name="Grown", questions=(HUMAN, GENERATED), generated_questions=COUNTED)


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
def test_a_generated_question_and_the_sets_record_load_back_from_every_format(tmp_path, suffix):
    path = write_question_set_file(SET, tmp_path / f"grown{suffix}")

    assert load_question_set_file(path) == SET


class _Ranks:
    identifier = "fixed"

    def retrieve(self, query: str, top_k: int) -> list[str]:
        return ["d2", "d1"][:top_k]


def test_marking_a_question_generated_leaves_its_fingerprint_as_it_was():
    unmarked = SET.model_copy(update={"questions": (HUMAN, GENERATED.model_copy(update={"generated": None}))})

    marked_run, unmarked_run = (run_question_set(question_set, _Ranks()) for question_set in (SET, unmarked))

    assert marked_run.questions.values("fingerprint") == unmarked_run.questions.values("fingerprint")


def test_a_bad_provenance_in_a_set_file_is_refused_naming_the_question():
    document = SET.model_dump(mode="json")
    document["questions"][1]["generated"]["source"] = "query"

    with pytest.raises(InvalidInputError, match="question 'gen-1'.*the source is one of cluster, document"):
        question_set_from_mapping(document, "grown.yaml")


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"by": None}, "a person's decision names the person"),
        ({"because": "validated"}, "validated, yet the tau lower bound of 'top1' is below 0.8"),
    ],
)
def test_a_record_whose_reason_does_not_hold_is_refused(fields, problem):
    with pytest.raises(ValueError, match=problem):
        GeneratedQuestionsCounted(**{**COUNTED.model_dump(), **fields})
