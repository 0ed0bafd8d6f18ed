"""The filters a generated question passes, on real text: Cranfield abstracts and the demo set's questions
compared as `coverage` compares queries (the lexical method, which the demo's BM25 retrievers imply)."""

from __future__ import annotations

import pytest
from traffic_project import DEMO, SET_FILE, paraphrase

from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.retrieval.corpus import read_document_texts
from retrieval_pipeline.core.services.generated.filters import (
    COPIED,
    DUPLICATE,
    DUPLICATE_OF_SET,
    EMPTY,
    GARBLED,
    copied_share,
    duplicate_reasons,
    text_problem,
)
from retrieval_pipeline.core.services.traffic.similarity import LEXICAL_THRESHOLD, LexicalSimilarity

TITLE, TEXT = read_document_texts(DEMO / "cranfield-corpus.jsonl.gz", {"1"}, "corpus")["1"]
DOCUMENT = f"{TITLE} {TEXT}"


@pytest.mark.parametrize(
    ("question", "problem"),
    [
        ("", EMPTY),
        ("and the ... of it?", EMPTY),
        ("#### ???? 1234 !!!! ****", GARBLED),
        ("wing wing wing wing lift", GARBLED),
        ("slipstream \x00 lift", GARBLED),
        (" ".join(["wing"] * 20 + ["lift"] * 21 + ["drag"]), GARBLED),
        ("an experimental study of a wing in a propeller slipstream was made", COPIED),
        ("how does a propeller slipstream change the lift of a wing?", None),
        ("experimental wing slipstream lift destalling", None),
    ],
)
def test_each_question_gets_its_first_problem_or_none(question, problem):
    assert text_problem(question, DOCUMENT) == problem


def test_the_copied_share_counts_the_questions_word_pairs_found_in_order_in_the_document():
    assert copied_share("the lift increase due to slipstream", DOCUMENT) == 1.0
    assert copied_share("slipstream due to increase lift", DOCUMENT) == 0.25  # only "due to"
    assert copied_share("slipstream", DOCUMENT) == 0.0


def test_a_paraphrase_of_a_set_question_and_a_repeat_of_a_kept_candidate_are_near_duplicates():
    questions = [question.question for question in load_question_set_file(SET_FILE).questions]
    similarity = LexicalSimilarity(questions)
    texts = [
        paraphrase(questions[0]),
        "propeller slipstream destalling lift increment",
        "lift increment destalling propeller slipstream",
        "hypersonic wake transition radiation",
    ]

    reasons = duplicate_reasons(similarity, texts, LEXICAL_THRESHOLD)

    assert reasons == [DUPLICATE_OF_SET, None, DUPLICATE, None]
