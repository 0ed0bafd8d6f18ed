"""The generator contract: how a model's reply is read as a question, and what a request and an answer
refuse on construction."""

from __future__ import annotations

import pytest

from retrieval_pipeline.core.retrieval.generators import GeneratedQuestion, GenerationRequest, question_of_reply


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        ("what causes flutter in panels?", "what causes flutter in panels?"),
        ("Question: what causes flutter?\nIt is answered by the abstract.", "what causes flutter?"),
        ('\n\n"how do wings stall?"', "how do wings stall?"),
        ("**Query 1:** wing stall angle", "wing stall angle"),
        ("1. heat flow in slabs", "heat flow in slabs"),
        ("   \n", ""),
    ],
)
def test_the_question_is_the_replys_first_line_without_its_label_or_quotes(reply, question):
    assert question_of_reply(reply) == question


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"form": "paraphrase"}, "document d7: the form is one of match, gap, not 'paraphrase'"),
        ({"title": " ", "text": ""}, "document d7: no title or text to write a question from"),
        ({"examples": ("wing stall", " ")}, "document d7: an example query is empty or not text"),
    ],
)
def test_a_request_names_its_document_when_refused(fields, problem):
    with pytest.raises(ValueError, match=problem):
        GenerationRequest(**{"document_id": "d7", "title": "Wings", "text": "On stall.", "form": "gap", **fields})


def test_a_requests_cache_key_holds_no_example_text_and_changes_with_the_examples_and_the_form():
    plain = GenerationRequest("d7", "Wings", "On stall.", "gap")
    with_examples = GenerationRequest("d7", "Wings", "On stall.", "gap", ("why do wings stall",))

    assert "stall" not in with_examples.key() and len({plain.key(), with_examples.key()}) == 2
    assert GenerationRequest("d7", "Wings", "On stall.", "match").key() != plain.key()


def test_a_negative_token_count_is_refused():
    with pytest.raises(ValueError, match="non-negative integer"):
        GeneratedQuestion("why do wings stall", prompt_tokens=-1)
