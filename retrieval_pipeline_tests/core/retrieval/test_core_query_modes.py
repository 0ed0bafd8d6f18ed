"""The query modes of a retriever's `conversation:` key: what each accepts, the text it asks a turn with,
and the turns `rewrite` cannot ask."""

from __future__ import annotations

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.conversations import ConversationTurn
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet
from retrieval_pipeline.core.retrieval.query_modes import (
    CURRENT,
    QueryMode,
    chat_history,
    check_rewrites,
    query_mode,
    query_text,
)


def turn(number: int, utterance: str, reply: str | None = None, rewrite: str | None = None) -> GoldenQuestion:
    return GoldenQuestion(
        id=f"wings/{number}",
        question=utterance,
        form="match",
        expected_document_ids=("12",),
        turn=ConversationTurn(conversation="wings", number=number, reply=reply, rewrite=rewrite),
    )


WINGS = GoldenQuestionSet(
    identifier="demo.conversations",
    name="Wings",
    questions=(
        turn(1, "what is the effect of wing sweep on lift?", reply="Sweep lowers the lift slope."),
        turn(2, "and on drag?", reply="It delays the drag rise.", rewrite="what is the effect of wing sweep on drag?"),
        turn(3, "at supersonic speeds?", rewrite="what is the effect of wing sweep on drag at supersonic speeds?"),
        GoldenQuestion(id="q1", question="what is a boundary layer?", form="gap", expected_document_ids=("7",)),
    ),
)


def asked(question_id: str, mode: QueryMode) -> str:
    question = WINGS.question(question_id)
    return query_text(question, WINGS.history(question), mode)


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        (None, "current"),
        ("current", "current"),
        ("rewrite", "rewrite"),
        ({"history": 2}, "history:2"),
        ({"history": "all"}, "history:all"),
        ({"history": 2, "replies": True}, "history:2+replies"),
        ({"history": "all", "replies": False}, "history:all"),
        ({"rewriter": "gpt_rewriter"}, "rewriter:gpt_rewriter"),
    ],
)
def test_each_mode_is_read_from_its_configuration_value_and_recorded_by_its_label(raw, label):
    assert query_mode(raw).label == label


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("history", "conversation is current, rewrite"),
        ({"history": 0}, "history is a number of turns from 1 or `all`"),
        ({"history": True}, "history is a number of turns"),
        ({"history": 2, "replies": "yes"}, "replies true or false"),
        ({"history": 2, "rewriter": "x"}, "conversation is current"),
        ({"rewriter": "Not Valid"}, "rewriter name 'Not Valid' must match"),
        (3, "conversation is current, rewrite"),
    ],
)
def test_a_bad_value_is_refused_saying_what_the_key_takes(raw, says):
    with pytest.raises(ValueError) as refused:
        query_mode(raw)
    assert says in str(refused.value)


def test_current_asks_the_utterance_as_typed():
    assert asked("wings/3", CURRENT) == "at supersonic speeds?"


def test_history_joins_the_last_n_user_turns_before_the_turn_and_the_turn_itself():
    assert asked("wings/3", query_mode({"history": 1})) == "and on drag?\nat supersonic speeds?"
    assert asked("wings/3", query_mode({"history": 2})) == (
        "what is the effect of wing sweep on lift?\nand on drag?\nat supersonic speeds?"
    )
    assert asked("wings/3", query_mode({"history": "all"})) == asked("wings/3", query_mode({"history": 5}))
    assert asked("wings/1", query_mode({"history": 2})) == "what is the effect of wing sweep on lift?"


def test_replies_put_the_assistants_replies_after_their_turns():
    assert asked("wings/3", query_mode({"history": 1, "replies": True})) == (
        "and on drag?\nIt delays the drag rise.\nat supersonic speeds?"
    )


def test_rewrite_asks_the_sets_rewrite_and_an_opening_turn_without_one_as_typed():
    assert asked("wings/3", QueryMode("rewrite")) == "what is the effect of wing sweep on drag at supersonic speeds?"
    assert asked("wings/1", QueryMode("rewrite")) == "what is the effect of wing sweep on lift?"


@pytest.mark.parametrize("mode", [query_mode({"history": "all", "replies": True}), QueryMode("rewrite")])
def test_a_single_question_is_asked_as_it_is_whatever_the_mode(mode):
    assert asked("q1", mode) == "what is a boundary layer?"


def test_the_history_a_retriever_receives_holds_the_utterances_and_the_recorded_replies():
    assert chat_history(WINGS.history(WINGS.question("wings/3"))) == (
        {"role": "user", "content": "what is the effect of wing sweep on lift?"},
        {"role": "assistant", "content": "Sweep lowers the lift slope."},
        {"role": "user", "content": "and on drag?"},
        {"role": "assistant", "content": "It delays the drag rise."},
    )
    assert chat_history(WINGS.history(WINGS.question("q1"))) == ()


def test_rewrite_refuses_a_set_with_a_later_turn_without_a_rewrite_naming_the_first_such_turn():
    check_rewrites(WINGS, "bm25_rewrite")
    unwritten = WINGS.model_copy(
        update={"questions": (WINGS.questions[0], turn(2, "and on drag?"), turn(3, "at supersonic speeds?"))}
    )
    with pytest.raises(InvalidInputError) as refused:
        check_rewrites(unwritten, "bm25_rewrite")
    assert (refused.value.key, refused.value.field) == ("conversation 'wings' turn 2", "rewrite")
    assert "retriever 'bm25_rewrite'" in str(refused.value) and "'demo.conversations'" in str(refused.value)
