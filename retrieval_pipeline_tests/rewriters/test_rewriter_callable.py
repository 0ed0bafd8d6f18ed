"""`kind: callable` rewriters: a function of the user's own rewrites each later turn, whose rewrite BM25 is
asked with; what it returns is checked, and its rewrites are cached by its name and version."""

from __future__ import annotations

import pytest
import rewriter_functions
from conversation_project import conversations, write_project

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.record import scored_run
from retrieval_pipeline.retrievers.lexical import retriever as lexical


@pytest.fixture(autouse=True)
def fresh():
    lexical.INDEXES.clear()
    rewriter_functions.SEEN.clear()


def project_with(tmp_path, function: str, **params):
    rewriters = {"by_rules": {"kind": "callable", "function": f"rewriter_functions:{function}", **params}}
    return load_config(write_project(tmp_path, {"bm25_rewritten": {"conversation": {"rewriter": "by_rules"}}}, rewriters))


def run_of(project):
    return scored_run(conversations(), project.retriever("bm25_rewritten"), EvaluationSettings.from_config(project))


def test_the_functions_rewrites_are_the_queries_of_the_later_turns_and_find_them(tmp_path):
    run = run_of(project_with(tmp_path, "opening_and_last"))

    assert run.query_mode == "rewriter:by_rules" and run.complete
    assert {q.question_id: q.hit_at(1) for q in run.questions} == dict.fromkeys(
        ["engines/1", "engines/2", "glaciers/1", "glaciers/2", "bees"], True
    )
    assert {q.question_id: q.query for q in run.questions if q.query} == {
        "engines/2": "what damage do bird strikes do to turbofan engines? how are the blades checked afterwards?",
        "glaciers/2": "how much ice have alpine glaciers lost? when did that begin?",
    }
    history, utterance = rewriter_functions.SEEN[0]
    assert utterance == "how are the blades checked afterwards?"
    assert history == [
        {"role": "user", "content": "what damage do bird strikes do to turbofan engines?"},
        {"role": "assistant", "content": "They can crack the fan blades."},
    ]


def test_opening_turns_and_single_questions_are_never_sent_to_the_rewriter(tmp_path):
    run_of(project_with(tmp_path, "opening_and_last"))
    assert sorted(utterance for _, utterance in rewriter_functions.SEEN) == [
        "how are the blades checked afterwards?",
        "when did that begin?",
    ]


def test_a_second_run_takes_the_rewrites_from_the_cache_until_the_version_changes(tmp_path):
    run_of(project_with(tmp_path, "opening_and_last"))
    lexical.INDEXES.clear()
    again = run_of(project_with(tmp_path, "opening_and_last"))
    assert len(rewriter_functions.SEEN) == 2 and again.complete

    run_of(project_with(tmp_path, "opening_and_last", version="2"))
    assert len(rewriter_functions.SEEN) == 4


def test_a_function_returning_no_text_fails_its_turns_which_are_not_asked_and_the_run_is_incomplete(tmp_path):
    run = run_of(project_with(tmp_path, "number"))

    assert not run.complete
    errors = {q.question_id: q.error for q in run.questions if q.error}
    assert set(errors) == {"engines/2", "glaciers/2"}
    assert "rewriter function rewriter_functions:number returned 7, not the rewritten question" in errors["engines/2"]
    assert all(not run.questions[run.questions.positions[question]].retrieved_document_ids for question in errors)


def test_a_function_that_cannot_be_imported_is_refused_naming_the_rewriter_and_the_field(tmp_path):
    with pytest.raises(InvalidInputError) as refused:
        project_with(tmp_path, "nowhere").rewriter("by_rules")
    assert (refused.value.key, refused.value.field) == ("rewriters.by_rules", "function")
