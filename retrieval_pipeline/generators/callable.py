"""`kind: callable`: a function of the user's own, `package.module:function(document, form, examples)`,
returning the question as text.

`document` is the title, a blank line and the text; `form` is `match` or `gap`; `examples` is a tuple of
users' queries near the document, empty unless the query log allows example texts. What it returns is
checked on every call: anything but text is that request's error, never read as a question. Its code
cannot be checksummed reliably, so its questions are keyed by the dotted name and an optional `version`,
which is what a user changes when the function's questions do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from retrieval_pipeline.core.retrieval.generators import (
    FORMS,
    GeneratedQuestion,
    GenerationRequest,
    GeneratorFault,
    GeneratorKind,
    generator_fingerprint,
)
from retrieval_pipeline.core.retrieval.kinds import DOTTED_PATTERN, KindContext, KindParams, imported_callable


class CallableGeneratorParams(KindParams):
    kind: Literal["callable"] = "callable"
    function: str = Field(pattern=DOTTED_PATTERN, description="package.module:function")
    version: str | None = Field(None, min_length=1, description="put into the fingerprint: change it when the questions change")
    concurrency: int = Field(1, ge=1, description="requests given to the function at once, each in a thread of its own")
    forms: tuple[Literal["match", "gap"], ...] = Field(FORMS, min_length=1, description="the forms the function writes")


class CallableGeneratorKind(GeneratorKind[CallableGeneratorParams]):
    Params = CallableGeneratorParams

    def build(self) -> CallableGenerator:
        function = imported_callable(self.params.function, KindContext.of(self), "function")
        return CallableGenerator(self.name, self.params, function)


class CallableGenerator:
    fail_fast_after = 0

    def __init__(self, name: str, params: CallableGeneratorParams, function: Callable[..., Any]):
        self.name = name
        self.concurrency = params.concurrency
        self.forms = tuple(dict.fromkeys(params.forms))
        self._dotted = params.function
        self._function = function
        self.fingerprint = generator_fingerprint("callable", function=params.function, version=params.version)

    def generate(self, request: GenerationRequest) -> GeneratedQuestion:
        try:
            answer = self._function(request.document, request.form, request.examples)
        except Exception as error:  # noqa: BLE001 - whatever the user's code raises is this request's error
            raise GeneratorFault(f"generator function {self._dotted} raised {type(error).__name__}: {error}") from None
        if not isinstance(answer, str):
            raise GeneratorFault(f"generator function {self._dotted} returned {type(answer).__name__}, not the question's text")
        return GeneratedQuestion(answer.strip())
