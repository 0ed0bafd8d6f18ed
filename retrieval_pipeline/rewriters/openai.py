"""`kind: openai`: any OpenAI-compatible chat-completions endpoint asked to rewrite a conversation's turn as
one standalone search question.

The request, its retries, deadlines, fail-fast and `{env: VAR}` headers are the `openai` judge's
(`http.chat.ChatEndpoint`); the reply's first non-blank line, without a `Question:` label or quotes, is
the rewrite (`question_of_reply`, as a generator's question is read). Everything that changes the rewrites
(the url without its query, the model, the prompt, the seed, `max_tokens`, `extra_body`) makes the
fingerprint the rewrites are cached by.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import Field, field_validator

from retrieval_pipeline.core.retrieval.generators import question_of_reply
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.core.retrieval.rewriters import (
    ChatMessages,
    Rewrite,
    RewriterFault,
    RewriterKind,
    rewriter_fingerprint,
    transcript,
)
from retrieval_pipeline.retrievers.http.chat import ChatEndpoint, ChatParams, checked_prompt, filled
from retrieval_pipeline.retrievers.http.params import resolved_headers

PLACEHOLDERS = ("{history}", "{question}")
DEFAULT_PROMPT = """\
Rewrite the user's last message of this conversation as one standalone search question: a question that
can be understood without the conversation, with every reference to what came before spelt out, and
nothing added that the conversation does not say.

Conversation:
{history}

Last message: {question}

Reply with the rewritten question alone, on one line."""
"""In the manner of TREC CAsT's manual rewrites: the turn's own question, made self-contained."""


class OpenAIRewriterParams(ChatParams):
    kind: Literal["openai"] = "openai"
    prompt: str = Field(
        DEFAULT_PROMPT,
        description="the user message; {history} (one `user: ...` or `assistant: ...` line per message) and {question} are filled in",
    )

    @field_validator("prompt")
    @classmethod
    def _placeholders(cls, prompt: str) -> str:
        return checked_prompt(prompt, PLACEHOLDERS, "where the conversation and the last message go")


class OpenAIRewriterKind(RewriterKind[OpenAIRewriterParams]):
    Params = OpenAIRewriterParams

    def build(self) -> OpenAIRewriter:
        return OpenAIRewriter(self.name, self.params, resolved_headers(self.params, KindContext.of(self)))


class OpenAIRewriter:
    """One request per turn; `concurrency` requests in flight at most."""

    def __init__(self, name: str, params: OpenAIRewriterParams, headers: Mapping[str, str]):
        self.name = name
        self.concurrency = params.concurrency
        self.fail_fast_after = params.fail_fast_after
        self._prompt = params.prompt
        self._chat = ChatEndpoint(name, params, headers)
        self.fingerprint = rewriter_fingerprint("openai", prompt=params.prompt, **params.answer_changing())

    def rewrite(self, history: ChatMessages, utterance: str) -> Rewrite:
        reply = self._chat.ask(filled(self._prompt, {"history": transcript(history), "question": utterance}))
        text = question_of_reply(reply.text)
        if not text:
            raise RewriterFault(f"the reply holds no question: {reply.text[:80]!r}")
        return Rewrite(text, reply.prompt_tokens, reply.completion_tokens)
