"""The question-generator contract: what a generator is asked (a document, the form wanted, maybe a few
users' queries), what it answers (one question), how a model's reply is read, and the fingerprint that
names a generator's questions.

A generator kind is a `GeneratorKind` registered under the entry-point group `retrieval_pipeline.generators`
(as judge kinds are under `retrieval_pipeline.judges`); each entry of the configuration's `generators:`
section is parsed once into its kind, whose `build()` makes the generator (`GENERATORS`, built as every
family of kinds is). A generated question is only a candidate: it is written to a judging file with its
provenance, and the fingerprint it carries tells the questions of a changed prompt or model from the old
ones'.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from retrieval_pipeline.core.golden.questions import QuestionForm
from retrieval_pipeline.core.retrieval.judges import FINGERPRINT_CHARS, document_text
from retrieval_pipeline.core.retrieval.kinds import Kind, KindFamily, ParamsT
from retrieval_pipeline.core.retrieval.retriever import RetrieverFault

GENERATOR_KINDS_GROUP = "retrieval_pipeline.generators"
FORMS = tuple(form.value for form in QuestionForm)
_LABEL = re.compile(r"^\s*(?:\d+[.)]\s+|[-•]\s+)?(?:\*\*)?(?:(?:question|query|q)\s*\d*\s*[:.-]\s*)?(?:\*\*)?\s*", re.I)
_QUOTES = "\"'“”‘’`*"
_SURROGATE = re.compile(r"[\ud800-\udfff]")


class GeneratorFault(RetrieverFault):
    """One request the generator could not answer (a reply without text, a function returning something
    else): counted as that request's error, never replaced by a guess."""


@dataclass(frozen=True)
class GenerationRequest:
    """One document to write a question for, in `form`; `examples` are users' queries near it, sent only
    where the query log allows example texts (`examples: true`)."""

    document_id: str
    title: str
    text: str
    form: str
    examples: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.document_id, str) or not self.document_id:
            raise ValueError(f"a generation request names its document, not {self.document_id!r}")
        if self.form not in FORMS:
            raise ValueError(f"document {self.document_id}: the form is one of {', '.join(FORMS)}, not {self.form!r}")
        if not (self.title or self.text).strip():
            raise ValueError(f"document {self.document_id}: no title or text to write a question from")
        if not all(isinstance(example, str) and example.strip() for example in self.examples):
            raise ValueError(f"document {self.document_id}: an example query is empty or not text")

    @property
    def document(self) -> str:
        """What a generator reads: the title, a blank line, the text (as a judge reads a document)."""
        return document_text(self.title, self.text)

    def key(self) -> str:
        """What the cache keys the answer by: a hash, so no example query's text is kept there."""
        identity = json.dumps([self.form, self.document, list(self.examples)], ensure_ascii=False)
        return hashlib.sha256(identity.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class GeneratedQuestion:
    """A generator's question, and the tokens its endpoint reported (None: not reported)."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ValueError(f"a generated question is text, not {self.text!r}")
        # a lone surrogate (`"\ud800"` in an endpoint's JSON, a function's `surrogateescape` text) is no
        # character UTF-8 can store: it becomes U+FFFD, which the filters drop as garbled
        object.__setattr__(self, "text", _SURROGATE.sub("\ufffd", self.text))
        for tokens in (self.prompt_tokens, self.completion_tokens):
            if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0):
                raise ValueError(f"a token count is a non-negative integer, not {tokens!r}")


@runtime_checkable
class Generator(Protocol):
    """Answers one request at a time; `concurrency` requests may be asked at once, `fail_fast_after`
    leading requests that cannot reach the service stop a pass (0: never), and `forms` are the forms it
    can write (a kind that only reuses the document's words writes `match` only)."""

    name: str
    fingerprint: str
    concurrency: int
    fail_fast_after: int
    forms: tuple[str, ...]

    def generate(self, request: GenerationRequest) -> GeneratedQuestion: ...


class GeneratorKind(Kind[ParamsT, Generator]):
    """One entry of `generators:`: its `Params` checked once, refusals naming `generators.NAME`; `build` makes
    the generator."""

    section = "generators"


def _forms_refused(generator: Generator) -> str | None:
    """A generator that writes no form, or one not known, is refused when built, not on its first request."""
    if generator.forms and set(generator.forms) <= set(FORMS):
        return None
    return f"says it writes forms {list(generator.forms)!r}; a generator writes one or both of {', '.join(FORMS)}"


GENERATORS: KindFamily[GeneratorKind, Generator] = KindFamily(
    GeneratorKind,
    GENERATOR_KINDS_GROUP,
    Generator,
    lacks="name, fingerprint, concurrency, fail_fast_after, forms or generate()",
    refused=_forms_refused,
)


def generator_fingerprint(kind: str, **answer_changing: Any) -> str:
    """A short hash of what changes a generator's questions (kind, model, prompt, seed...), never of
    headers: they hold the secrets, and a new key writes no other question."""
    identity = json.dumps({"generator": kind, **answer_changing}, sort_keys=True, default=str)
    return hashlib.sha256(identity.encode()).hexdigest()[:FINGERPRINT_CHARS]


def question_of_reply(reply: str) -> str:
    """The question in a model's reply: its first non-blank line, without a leading `Question:` label or
    list mark and without surrounding quotes; empty when the reply has no text (the filters drop it).
    Models asked for the question alone often add one of these; a later line is commentary."""
    line = next((line for line in reply.splitlines() if line.strip()), "")
    return _LABEL.sub("", line, count=1).strip().strip(_QUOTES).strip()
