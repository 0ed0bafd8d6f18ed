"""`kind: openai`: any OpenAI-compatible chat-completions endpoint (OpenAI, Azure OpenAI, Ollama, vLLM) asked
for one grade on UMBRELA's 0-3 scale per (question, document).

The request and its rules are the shared chat client's (`http.chat.ChatEndpoint`: one deadline per attempt,
retries of transient failures, fail-fast on an unreachable service, secret headers from the environment
scrubbed from every message); the reply is read as its first digit (`grade_of_reply`). Azure's `api-key`
header and `?api-version=` are a `headers` entry and the url.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import Field, field_validator

from retrieval_pipeline.core.retrieval.judges import JudgeKind, MachineJudgement, grade_of_reply, judge_fingerprint
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.judges.base import JudgeParams
from retrieval_pipeline.retrievers.http.chat import ChatEndpoint, ChatParams, checked_prompt, filled
from retrieval_pipeline.retrievers.http.params import resolved_headers

PLACEHOLDERS = ("{question}", "{document}")
DEFAULT_PROMPT = """\
You judge whether a document answers a search question, on a scale of 0 to 3:
3 = the document is about the question and holds its exact answer;
2 = the document holds an answer, but it is partial, unclear or buried in other material;
1 = the document is on the question's topic but does not answer it;
0 = the document has nothing to do with the question.
Judge the document by what it says, not by how many of the question's words it repeats.

Question: {question}

Document:
{document}

Reply with the grade alone: one digit, 0, 1, 2 or 3."""
"""In the spirit of UMBRELA (Upadhyay et al. 2024): the same four grades, one number back, no reasoning asked
for, so the first digit of the reply is the grade."""


class OpenAIJudgeParams(JudgeParams, ChatParams):
    kind: Literal["openai"] = "openai"
    prompt: str = Field(DEFAULT_PROMPT, description="the user message; {question} and {document} are filled in")

    @field_validator("prompt")
    @classmethod
    def _placeholders(cls, prompt: str) -> str:
        return checked_prompt(prompt, PLACEHOLDERS, "where the pair's texts go")


class OpenAIJudgeKind(JudgeKind[OpenAIJudgeParams]):
    Params = OpenAIJudgeParams

    def build(self) -> OpenAIJudge:
        return OpenAIJudge(self.name, self.params, resolved_headers(self.params, KindContext.of(self)))


class OpenAIJudge:
    """One request per pair; `concurrency` requests in flight at most."""

    def __init__(self, name: str, params: OpenAIJudgeParams, headers: Mapping[str, str]):
        self.name = name
        self.concurrency = params.concurrency
        self.fail_fast_after = params.fail_fast_after
        self._params = params
        self._chat = ChatEndpoint(name, params, headers)
        self.fingerprint = judge_fingerprint("openai", params.relevant_from, prompt=params.prompt, **params.answer_changing())

    def judge(self, question: str, document: str) -> MachineJudgement:
        reply = self._chat.ask(filled(self._params.prompt, {"question": question, "document": document}))
        return MachineJudgement.graded(
            grade_of_reply(reply.text),
            self._params.relevant_from,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
        )
