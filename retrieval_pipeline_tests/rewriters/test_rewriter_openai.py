"""`kind: openai` rewriters against a stand-in chat endpoint on 127.0.0.1 (a fixed rule, no model): the
conversation goes into the prompt, the reply becomes the turn's query, rewrites are cached, the key is
read from the environment and never kept."""

from __future__ import annotations

import logging

import pytest
from chat_rewriter_service import SECRET, TOKEN_VAR, ChatRewriterService
from conversation_project import conversations, write_project
from local_servers import closed_port_url, running

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.scoring.failures import failure_summary
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record, scored_run
from retrieval_pipeline.core.storage.store import ResultStore
from retrieval_pipeline.retrievers.lexical import retriever as lexical

pytestmark = pytest.mark.slow  # a server on 127.0.0.1


@pytest.fixture
def chat(monkeypatch):
    lexical.INDEXES.clear()
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    with running(ChatRewriterService()) as server:
        yield server


def project_with(tmp_path, url: str, **params):
    rewriter = {
        "kind": "openai",
        "url": url,
        "model": "rule-rewriter",
        "headers": {"Authorization": {"env": TOKEN_VAR, "prefix": "Bearer "}},
        "timeout_seconds": 10,
        "retries": 1,
        "backoff_seconds": 0.01,
        **params,
    }
    config = write_project(tmp_path, {"bm25_rewritten": {"conversation": {"rewriter": "chat"}}}, {"chat": rewriter})
    return load_config(config)


def run_of(project):
    return scored_run(conversations(), project.retriever("bm25_rewritten"), EvaluationSettings.from_config(project))


def test_each_later_turn_is_asked_with_the_endpoints_rewrite_of_the_conversation(tmp_path, chat):
    run = run_of(project_with(tmp_path, chat.url()))

    assert run.complete and run.query_mode == "rewriter:chat"
    assert run.questions[run.questions.positions["glaciers/2"]].query == (
        "how much ice have alpine glaciers lost? when did that begin?"
    )
    assert all(question.hit_at(1) for question in run.questions)
    assert len(chat.bodies) == 2  # the two later turns, asked at once: in either order
    [body] = [b for b in chat.bodies if "Last message: how are the blades checked afterwards?" in b["messages"][0]["content"]]
    prompt = body["messages"][0]["content"]
    assert "user: what damage do bird strikes do to turbofan engines?\nassistant: They can crack the fan blades." in prompt
    assert (body["model"], body["temperature"]) == ("rule-rewriter", 0)


def test_a_second_run_asks_the_endpoint_nothing_and_a_new_prompt_asks_again(tmp_path, chat):
    first = run_of(project_with(tmp_path, chat.url()))
    second = run_of(project_with(tmp_path, chat.url()))
    assert len(chat.bodies) == 2
    assert [q.query for q in second.questions] == [q.query for q in first.questions]

    prompt = "Make it standalone.\nConversation:\n{history}\n\nLast message: {question}\n\nReply with one line."
    run_of(project_with(tmp_path, chat.url(), prompt=prompt))
    assert len(chat.bodies) == 4


def test_a_failing_endpoint_fails_its_turns_alone_naming_the_rewriter_and_never_the_key(tmp_path, chat, caplog):
    caplog.set_level(logging.DEBUG)
    project = project_with(tmp_path, chat.url("/v1/echo"))
    store = ResultStore(str(tmp_path / "results"))
    evaluation = evaluate_and_record(
        conversations(), project.retriever("bm25_rewritten"), store, EvaluationSettings.from_config(project)
    )

    run = store.load(evaluation.stored)
    errors = {q.question_id: q.error for q in run.questions if q.error}
    assert set(errors) == {"engines/2", "glaciers/2"}
    assert errors["engines/2"].startswith("rewriter chat could not rewrite the turn: ")
    assert "400" in errors["engines/2"]
    assert SECRET not in " ".join(errors.values()) + caplog.text + evaluation.report.summary
    assert {q.question_id for q in run.questions if q.hit_at(1)} == {"engines/1", "glaciers/1", "bees"}


def test_a_prompt_without_the_conversation_is_refused_naming_the_rewriter_and_the_field(tmp_path, chat):
    with pytest.raises(InvalidInputError) as refused:
        project_with(tmp_path, chat.url(), prompt="Rewrite {question}").rewriter("chat")
    assert (refused.value.key, refused.value.field) == ("rewriters.chat", "prompt")
    assert "{history}" in str(refused.value)


def test_when_the_first_turns_cannot_reach_the_endpoint_the_rest_are_not_sent(tmp_path, chat):
    project = project_with(tmp_path, closed_port_url("/v1/chat/completions"), fail_fast_after=1, concurrency=1)

    run = run_of(project)

    errors = [q.error for q in run.questions if q.error]
    assert len(errors) == 2
    assert errors[0].startswith("rewriter chat could not rewrite the turn: ")
    assert errors[1].startswith("not asked, the run stopped early: rewriter chat could not rewrite the turn: ")
    assert ", 1 not asked" in failure_summary(run)
    assert chat.bodies == []
