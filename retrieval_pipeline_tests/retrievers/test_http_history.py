"""The http kind hands a team's service the conversation before a turn: a body template's `{history}`
becomes the chat messages, so a service that reads the history itself is measured as users reach it."""

from __future__ import annotations

import pytest
from http_service import Handler, Service, build, overlap_ranking, running

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.conversations import ConversationTurn
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet
from retrieval_pipeline.core.retrieval.query_modes import QueryPlan, query_mode
from retrieval_pipeline.core.services.evaluation.runner import run_question_set

TEMPLATE = {"query": "{question}", "size": "{limit}", "conversation": {"messages": "{history}"}}


class ConversationalHandler(Handler):
    def route_chat(self, query, body, call):
        """Ranks by the question and every earlier user message, as a chat search service may."""
        said = [message["content"] for message in body["conversation"]["messages"] if message["role"] == "user"]
        return 200, {}, {"results": overlap_ranking(" ".join([*said, body["query"]]))[: body["size"]]}


@pytest.fixture
def chat_service():
    with running(Service(ConversationalHandler)) as server:
        yield server


def turn(number: int, utterance: str, reply: str | None = None) -> GoldenQuestion:
    return GoldenQuestion(
        id=f"engines/{number}",
        question=utterance,
        form="gap",
        expected_document_ids=("d1",),
        turn=ConversationTurn(conversation="engines", number=number, reply=reply),
    )


CONVERSATION = GoldenQuestionSet(
    identifier="http.conversations",
    name="HTTP conversations",
    questions=(
        turn(1, "what do turbofan engines need after bird strikes", reply="an inspection of the fan blades"),
        turn(2, "how often is it due?"),
        GoldenQuestion(id="bees", question="how do bees find flowers", form="match", expected_document_ids=("d4",)),
    ),
)


def test_the_service_receives_the_earlier_turns_as_chat_messages_and_finds_the_elliptical_turn(chat_service):
    retriever = build(chat_service.url("/chat"), body_template=TEMPLATE)

    run = run_question_set(CONVERSATION, retriever)

    assert [question.hit_at(1) for question in run.questions] == [True, True, True]
    sent = {request["body"]["query"]: request["body"]["conversation"]["messages"] for request in chat_service.requests}
    assert sent == {
        "what do turbofan engines need after bird strikes": [],
        "how often is it due?": [
            {"role": "user", "content": "what do turbofan engines need after bird strikes"},
            {"role": "assistant", "content": "an inspection of the fan blades"},
        ],
        "how do bees find flowers": [],
    }


def test_the_history_comes_beside_the_query_the_mode_made(chat_service):
    retriever = build(chat_service.url("/chat"), body_template=TEMPLATE)

    run = run_question_set(CONVERSATION, retriever, queries=QueryPlan(query_mode({"history": 1})))

    second = next(request["body"] for request in chat_service.requests if "how often" in request["body"]["query"])
    assert second["query"] == "what do turbofan engines need after bird strikes\nhow often is it due?"
    assert len(second["conversation"]["messages"]) == 2
    assert run.questions[1].query == second["query"]


def test_a_retriever_asked_without_a_conversation_sends_an_empty_history(chat_service):
    retriever = build(chat_service.url("/chat"), body_template=TEMPLATE)
    assert retriever.retrieve("bees flowers", 3) == ["d4"]
    assert chat_service.requests[0]["body"]["conversation"]["messages"] == []


def test_history_inside_a_longer_string_is_refused_when_the_configuration_is_checked(chat_service):
    with pytest.raises(InvalidInputError) as refused:
        build(chat_service.url("/chat"), body_template={"query": "{question}", "context": "earlier: {history}"})
    assert refused.value.field == "body_template"
    assert '{history} must be a whole value ("{history}"), not inside the string at context' in str(refused.value)
