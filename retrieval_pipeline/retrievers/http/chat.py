"""An OpenAI-compatible chat-completions endpoint (OpenAI, Azure OpenAI, Ollama, vLLM) asked for one reply:
what the `openai` judge and the `openai` question generator share, so both follow one set of rules.

The request is `POST {"model", "messages": [{"role": "user", "content": PROMPT}], "temperature": 0, "seed"}`
(`extra_body` may override any of it); the reply is `choices[0].message.content`, and `usage` gives the
tokens spent. Requests follow the HTTP kind's rules (`client.JsonService`: one deadline per attempt,
retries of transient failures such as 429 and 5xx, fail-fast on an unreachable service, secret headers
from the environment scrubbed from every message, and from the reply before anyone keeps it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from retrieval_pipeline.core.base.secrets import scrub
from retrieval_pipeline.retrievers.http.client import JsonService, at_path
from retrieval_pipeline.retrievers.http.params import HttpTransportParams


class ChatParams(HttpTransportParams):
    """The endpoint, its transport settings, and what is sent besides the prompt."""

    model: str = Field(min_length=1, description="the model name the endpoint serves")
    seed: int | None = Field(0, description="sent when set, for endpoints that sample reproducibly; null: none sent")
    max_tokens: int | None = Field(None, ge=1, description="sent when set: a cap on the reply's length")

    def answer_changing(self) -> dict[str, Any]:
        """What goes into a fingerprint: the url without its query and headers (they may hold keys, and a
        new key changes no answer), the model and what is sent with every request."""
        return {"url": self.url.split("?", 1)[0], **self.model_dump(include={"model", "seed", "max_tokens", "extra_body"})}


@dataclass(frozen=True)
class ChatReply:
    """The reply's text, and the tokens the endpoint reported (None: not reported, never zero)."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def checked_prompt(prompt: str, placeholders: Sequence[str], purpose: str) -> str:
    """A prompt of the user's own must keep the placeholders its texts are put in (a validator's rule)."""
    missing = [name for name in placeholders if name not in prompt]
    if missing:
        raise ValueError(f"the prompt must hold {' and '.join(missing)}, {purpose}")
    return prompt


def filled(prompt: str, texts: Mapping[str, str]) -> str:
    """The prompt with each `{name}` of `texts` replaced in one pass, so a text holding `{document}` (a
    question that quotes a placeholder) reaches the endpoint as written."""
    pattern = re.compile(r"\{(" + "|".join(re.escape(name) for name in texts) + r")\}")
    return pattern.sub(lambda found: texts[found.group(1)], prompt)


class ChatEndpoint:
    """One request per `ask`; `concurrency` requests in flight at most (the service's pool)."""

    def __init__(self, name: str, params: ChatParams, headers: Mapping[str, str]):
        self._params = params
        self._service = JsonService(name, params, headers)
        self._endpoint = f"POST {params.url.split('?', 1)[0]}"  # its query may hold a key

    def ask(self, content: str) -> ChatReply:
        params = self._params
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
        # an endpoint may write what it was sent into its reply (the Authorization header): masked before it is kept
        return ChatReply(scrub(text), _tokens(usage, "prompt_tokens"), _tokens(usage, "completion_tokens"))


_MOST_TOKENS = 10**9
"""More tokens than one reply can cost: a larger count is no count (10**30 would overflow the caches' SQLite
integers, and their sums the reports')."""


def _tokens(usage: Any, name: str) -> int | None:
    """An endpoint that reports no usage (or a malformed or impossible one) leaves the cost unknown, never zero."""
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MOST_TOKENS else None
