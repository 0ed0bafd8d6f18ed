"""`kind: openai`: any OpenAI-compatible chat-completions endpoint (OpenAI, Azure OpenAI, Ollama, vLLM) asked
for one grade on UMBRELA's 0-3 scale per (question, document).

The request is `POST {"model", "messages": [{"role": "user", "content": PROMPT}], "temperature": 0, "seed"}`;
the answer's `choices[0].message.content` is read as its first digit (`grade_of_reply`), and its `usage`
gives the tokens spent. Requests follow the HTTP kind's rules (`http.client.JsonService`: one deadline per
attempt, retries of transient failures, fail-fast on an unreachable service, secret headers from the
environment scrubbed from every message). Azure's `api-key` header and `?api-version=` are a `headers`
entry and the url.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, field_validator

from retrieval_pipeline.core.retrieval.judges import MachineJudgement, grade_of_reply, judge_fingerprint
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.judges.base import JudgeContext, JudgeParams
from retrieval_pipeline.retrievers.http.client import JsonService, at_path
from retrieval_pipeline.retrievers.http.params import HttpTransportParams, resolved_headers

PLACEHOLDERS = ("{question}", "{document}")
_PLACEHOLDER = re.compile(r"\{(question|document)\}")
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


class OpenAIJudgeParams(JudgeParams, HttpTransportParams):
    kind: Literal["openai"] = "openai"
    model: str = Field(min_length=1, description="the model name the endpoint serves")
    prompt: str = Field(DEFAULT_PROMPT, description="the user message; {question} and {document} are filled in")
    seed: int | None = Field(0, description="sent when set, for endpoints that sample reproducibly; null: none sent")
    max_tokens: int | None = Field(None, ge=1, description="sent when set: a cap on the reply's length")

    @field_validator("prompt")
    @classmethod
    def _placeholders(cls, prompt: str) -> str:
        missing = [name for name in PLACEHOLDERS if name not in prompt]
        if missing:
            raise ValueError(f"the prompt must hold {' and '.join(missing)}, where the pair's texts go")
        return prompt


class OpenAIJudge:
    """One request per pair; `concurrency` requests in flight at most."""

    def __init__(self, name: str, params: OpenAIJudgeParams, headers: Mapping[str, str]):
        self.name = name
        self.concurrency = params.concurrency
        self.fail_fast_after = params.fail_fast_after
        self._params = params
        self._service = JsonService(name, params, headers)
        self._endpoint = f"POST {params.url.split('?', 1)[0]}"  # its query may hold a key
        # The url's query and the headers stay out: they may hold keys, and a new key changes no answer.
        self.fingerprint = judge_fingerprint(
            "openai",
            params.relevant_from,
            url=params.url.split("?", 1)[0],
            **params.model_dump(include={"model", "prompt", "seed", "max_tokens", "extra_body"}),
        )

    @classmethod
    def from_config(cls, name: str, params: Mapping[str, Any], context: BuildContext) -> OpenAIJudge:
        kind = JudgeContext(name, context)
        parsed = kind.parse(OpenAIJudgeParams, params)
        return cls(name, parsed, resolved_headers(parsed, kind))

    def judge(self, question: str, document: str) -> MachineJudgement:
        params = self._params
        texts = {"question": question, "document": document}  # one pass: a question may hold "{document}"
        content = _PLACEHOLDER.sub(lambda found: texts[found.group(1)], params.prompt)
        body: dict[str, Any] = {
            "model": params.model,
            "messages": [{"role": "user", "content": content}],
            "temperature": 0,
            **(params.extra_body or {}),
        }
        for name in ("seed", "max_tokens"):
            if getattr(params, name) is not None:
                body[name] = getattr(params, name)
        answer = self._service.request_json("POST", params.url, query=params.extra_params, body=body)
        reply = at_path(answer, "choices")
        reply = reply[0] if isinstance(reply, list) and reply else None
        text = at_path(reply, "message.content")
        if not isinstance(text, str):
            raise self._service.fault(
                f"{self._endpoint}: the answer has no text at choices[0].message.content: {self._service.preview(answer)}"
            )
        usage = answer.get("usage") if isinstance(answer, dict) else None
        return MachineJudgement.graded(
            grade_of_reply(text),
            params.relevant_from,
            prompt_tokens=_tokens(usage, "prompt_tokens"),
            completion_tokens=_tokens(usage, "completion_tokens"),
        )


def _tokens(usage: Any, name: str) -> int | None:
    """An endpoint that reports no usage (or a malformed one) leaves the cost unknown, never zero."""
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
