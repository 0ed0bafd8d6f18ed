"""A conversation's turns asked as each retriever's `conversation:` key says, by BM25 over a small real
corpus, through the configuration, the evaluation every caller shares and the store."""

from __future__ import annotations

import pytest
from conversation_project import conversations, write_project

from retrieval_pipeline.core.base.errors import InvalidInputError, UnknownIdentifierError
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record, scored_run
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.retrievers.lexical import retriever as lexical

RETRIEVERS = {
    "bm25_current": {},
    "bm25_history2": {"conversation": {"history": 2}},
    "bm25_replies": {"conversation": {"history": "all", "replies": True}},
    "bm25_rewrite": {"conversation": "rewrite"},
}


@pytest.fixture(autouse=True)
def fresh_process_cache():
    lexical.INDEXES.clear()


@pytest.fixture
def project(tmp_path):
    return load_config(write_project(tmp_path, RETRIEVERS))


def run_of(project, retriever: str, question_set=None):
    settings = EvaluationSettings.from_config(project)
    return scored_run(question_set or conversations(), project.retriever(retriever), settings)


def top1(run) -> dict[str, bool]:
    return {question.question_id: question.hit_at(1) for question in run.questions}


def test_history_two_finds_the_later_turns_that_the_utterance_alone_misses(project):
    current, history = run_of(project, "bm25_current"), run_of(project, "bm25_history2")

    assert top1(current) == {"engines/1": True, "engines/2": False, "glaciers/1": True, "glaciers/2": False, "bees": True}
    assert top1(history) == dict.fromkeys(top1(current), True)
    assert (current.query_mode, history.query_mode) == ("current", "history:2")


def test_each_question_keeps_the_text_it_was_asked_with_and_none_when_it_was_its_own(project):
    history = {question.question_id: question.query for question in run_of(project, "bm25_history2").questions}
    replies = {question.question_id: question.query for question in run_of(project, "bm25_replies").questions}

    assert history == {
        "engines/1": None,
        "engines/2": "what damage do bird strikes do to turbofan engines?\nhow are the blades checked afterwards?",
        "glaciers/1": None,
        "glaciers/2": "how much ice have alpine glaciers lost?\nwhen did that begin?",
        "bees": None,
    }
    assert replies["engines/2"] == (
        "what damage do bird strikes do to turbofan engines?\nThey can crack the fan blades.\nhow are the blades checked afterwards?"
    )
    assert {question.query for question in run_of(project, "bm25_current").questions} == {None}


def test_rewrite_asks_the_sets_rewrites_an_oracle_that_finds_every_turn(project):
    run = run_of(project, "bm25_rewrite")

    assert run.query_mode == "rewrite"
    assert all(top1(run).values())
    assert run.questions[run.questions.positions["glaciers/2"]].query == "when did alpine glaciers begin to lose their ice?"


def test_rewrite_on_a_set_whose_later_turn_has_none_is_refused_before_anything_is_asked_or_stored(project, tmp_path):
    store = ResultStore(str(tmp_path / "results"))
    with pytest.raises(InvalidInputError) as refused:
        evaluate_and_record(
            conversations(with_rewrites=False), project.retriever("bm25_rewrite"), store, EvaluationSettings.from_config(project)
        )

    assert (refused.value.key, refused.value.field) == ("conversation 'engines' turn 2", "rewrite")
    assert store.history(HistoryKey("demo.conversations", "bm25_rewrite")) == []


def test_the_queries_and_the_mode_are_stored_with_the_run_and_read_back(project, tmp_path):
    store = ResultStore(str(tmp_path / "results"))
    evaluation = evaluate_and_record(
        conversations(), project.retriever("bm25_history2"), store, EvaluationSettings.from_config(project)
    )

    loaded = store.load(evaluation.stored)
    assert loaded == evaluation.run
    assert loaded.query_mode == "history:2"
    assert [question.query for question in loaded.questions] == [question.query for question in evaluation.run.questions]
    assert store.read_summary(evaluation.stored)["query_mode"] == "history:2"


def test_a_single_question_set_is_asked_as_typed_whatever_the_mode(project):
    singles = conversations().model_copy(update={"questions": conversations().questions[-1:]})
    run = run_of(project, "bm25_replies", singles)
    assert [question.query for question in run.questions] == [None] and top1(run) == {"bees": True}


@pytest.mark.parametrize(
    ("conversation", "says"),
    [
        ({"history": 0}, "history is a number of turns from 1 or `all`"),
        ("transcript", "conversation is current, rewrite, {history: N}"),
        ({"rewriter": "missing"}, "no rewriter 'missing' is configured (rewriters: none"),
    ],
)
def test_a_bad_conversation_key_is_refused_when_the_configuration_is_loaded_naming_the_retriever_and_the_key(
    tmp_path, conversation, says
):
    with pytest.raises(InvalidInputError) as refused:
        load_config(write_project(tmp_path, {"bm25_chat": {"conversation": conversation}}))

    assert (refused.value.key, refused.value.field) == ("retrievers.bm25_chat", "conversation")
    assert says in str(refused.value)


def test_a_rewriter_is_named_from_the_rewriters_section(tmp_path):
    project = load_config(write_project(tmp_path, {}, {"by_rules": {"kind": "callable", "function": "os.path:join"}}))
    with pytest.raises(UnknownIdentifierError, match="by_rule"):
        project.rewriter("by_rule")
