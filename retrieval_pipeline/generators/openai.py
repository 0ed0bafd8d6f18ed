"""`kind: openai`: any OpenAI-compatible chat-completions endpoint asked to write one search question that a
given document answers, in everyday words (`gap`) or in the document's own words (`match`).

The request, its retries, deadlines, fail-fast and `{env: VAR}` headers are the `openai` judge's
(`http.chat.ChatEndpoint`); the reply's first non-blank line, without a `Question:` label or quotes, is
the question (`question_of_reply`). Everything that changes the questions (the url without its query, the
model, the prompt and the form instructions, the seed, `max_tokens`, `extra_body`) makes the fingerprint.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import Field, field_validator

from retrieval_pipeline.core.retrieval.generators import (
    FORMS,
    GeneratedQuestion,
    GenerationRequest,
    GeneratorKind,
    generator_fingerprint,
    question_of_reply,
)
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.retrievers.http.chat import ChatEndpoint, ChatParams, checked_prompt, filled
from retrieval_pipeline.retrievers.http.params import resolved_headers

PLACEHOLDERS = ("{document}", "{form}")
DEFAULT_PROMPT = """\
Write one question that a user of a search engine would type, and that the document below answers.
{form}
{examples}
Document:
{document}

Reply with the question alone, on one line."""
FORM_INSTRUCTIONS = {
    "gap": "Use everyday words, as someone who has not read the document would ask: avoid the document's own distinctive terms.",
    "match": "Use the document's own words and terms, as someone who knows its vocabulary would ask.",
}
"""What `{form}` becomes: a `gap` question rewords the document, a `match` question shares its words."""
EXAMPLES_INTRO = "Users asked questions like these; write a new one in their manner, not a copy of one:\n"
"""Before the example queries `{examples}` becomes, when the query log allows them (`examples: true`)."""


class OpenAIGeneratorParams(ChatParams):
    kind: Literal["openai"] = "openai"
    prompt: str = Field(DEFAULT_PROMPT, description="the user message; {document}, {form} and {examples} are filled in")

    @field_validator("prompt")
    @classmethod
    def _placeholders(cls, prompt: str) -> str:
        return checked_prompt(prompt, PLACEHOLDERS, "where the document and the wanted form go")


class OpenAIGeneratorKind(GeneratorKind[OpenAIGeneratorParams]):
    Params = OpenAIGeneratorParams

    def build(self) -> OpenAIGenerator:
        return OpenAIGenerator(self.name, self.params, resolved_headers(self.params, KindContext.of(self)))


class OpenAIGenerator:
    """One request per question; `concurrency` requests in flight at most."""

    forms = FORMS

    def __init__(self, name: str, params: OpenAIGeneratorParams, headers: Mapping[str, str]):
        self.name = name
        self.concurrency = params.concurrency
        self.fail_fast_after = params.fail_fast_after
        self._prompt = params.prompt
        self._chat = ChatEndpoint(name, params, headers)
        self.fingerprint = generator_fingerprint(
            "openai", prompt=params.prompt, forms=FORM_INSTRUCTIONS, examples=EXAMPLES_INTRO, **params.answer_changing()
        )

    def generate(self, request: GenerationRequest) -> GeneratedQuestion:
        examples = EXAMPLES_INTRO + "".join(f"- {example}\n" for example in request.examples) if request.examples else ""
        texts = {"document": request.document, "form": FORM_INSTRUCTIONS[request.form], "examples": examples}
        reply = self._chat.ask(filled(self._prompt, texts))
        return GeneratedQuestion(question_of_reply(reply.text), reply.prompt_tokens, reply.completion_tokens)
