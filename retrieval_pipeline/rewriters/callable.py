"""`kind: callable`: a function of the user's own, `package.module:function(history, utterance)`, returning
the turn rewritten as a standalone question.

`history` is the conversation before the turn as chat messages (a list of `{"role": "user" | "assistant",
"content": ...}`, oldest first); `utterance` is the turn as typed. What it returns is checked on every
call: anything but non-blank text is that turn's error, never replaced by the utterance. Its code cannot
be checksummed reliably, so its rewrites are cached by the dotted name and an optional `version`, which
is what a user changes when the function's rewrites do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from retrieval_pipeline.core.retrieval.kinds import DOTTED_PATTERN, KindContext, KindParams, imported_callable
from retrieval_pipeline.core.retrieval.rewriters import ChatMessages, Rewrite, RewriterFault, RewriterKind, rewriter_fingerprint


class CallableRewriterParams(KindParams):
    kind: Literal["callable"] = "callable"
    function: str = Field(pattern=DOTTED_PATTERN, description="package.module:function")
    version: str | None = Field(None, min_length=1, description="put into the fingerprint: change it when the rewrites change")
    concurrency: int = Field(1, ge=1, description="turns given to the function at once, each in a thread of its own")


class CallableRewriterKind(RewriterKind[CallableRewriterParams]):
    Params = CallableRewriterParams

    def build(self) -> CallableRewriter:
        function = imported_callable(self.params.function, KindContext.of(self), "function")
        return CallableRewriter(self.name, self.params, function)


class CallableRewriter:
    fail_fast_after = 0

    def __init__(self, name: str, params: CallableRewriterParams, function: Callable[..., Any]):
        self.name = name
        self.concurrency = params.concurrency
        self._dotted = params.function
        self._function = function
        self.fingerprint = rewriter_fingerprint("callable", function=params.function, version=params.version)

    def rewrite(self, history: ChatMessages, utterance: str) -> Rewrite:
        try:
            answer = self._function([dict(message) for message in history], utterance)
        except Exception as error:  # noqa: BLE001 - whatever the user's code raises is this turn's error
            raise RewriterFault(f"rewriter function {self._dotted} raised {type(error).__name__}: {error}") from None
        if not isinstance(answer, str) or not answer.strip():
            raise RewriterFault(f"rewriter function {self._dotted} returned {answer!r}, not the rewritten question")
        return Rewrite(answer.strip())
