"""The query-rewriter contract: what a rewriter is asked (a turn's utterance and the conversation before
it, as chat messages), what it answers (one standalone question), and the fingerprint that names its
rewrites.

A rewriter kind is a `RewriterKind` registered under the entry-point group `retrieval_pipeline.rewriters`
(as judge kinds are under `retrieval_pipeline.judges`); each entry of the configuration's `rewriters:`
section is parsed once into its kind, whose `build()` makes the rewriter (`REWRITERS`, built as every
family of kinds is). A retriever asks a conversation's turns by their rewrites with
`conversation: {rewriter: NAME}` (query_modes.py); the rewrites are cached by fingerprint, so a second run
asks the rewriter nothing and a changed prompt or model never passes for the old one's rewrites.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from retrieval_pipeline.core.retrieval.judges import FINGERPRINT_CHARS
from retrieval_pipeline.core.retrieval.kinds import Kind, KindFamily, ParamsT
from retrieval_pipeline.core.retrieval.retriever import ChatMessages, RetrieverFault

REWRITER_KINDS_GROUP = "retrieval_pipeline.rewriters"


class RewriterFault(RetrieverFault):
    """One turn the rewriter could not rewrite (a reply without text, a function returning something else):
    that turn's error in the run, never replaced by the utterance as typed."""


@dataclass(frozen=True)
class Rewrite:
    """A rewriter's standalone question, and the tokens its endpoint reported (None: not reported)."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise RewriterFault(f"the rewrite is empty or not text: {self.text!r}")


@runtime_checkable
class Rewriter(Protocol):
    """Rewrites one turn at a time; `concurrency` turns may be asked at once, and `fail_fast_after` leading
    turns that cannot reach the service stop the rewriting (0: never)."""

    name: str
    fingerprint: str
    concurrency: int
    fail_fast_after: int

    def rewrite(self, history: ChatMessages, utterance: str) -> Rewrite: ...


class RewriterKind(Kind[ParamsT, Rewriter]):
    """One entry of `rewriters:`: its `Params` checked once, refusals naming `rewriters.NAME`; `build` makes
    the rewriter."""

    section = "rewriters"


REWRITERS: KindFamily[RewriterKind, Rewriter] = KindFamily(
    RewriterKind, REWRITER_KINDS_GROUP, Rewriter, lacks="name, fingerprint, concurrency, fail_fast_after or rewrite()"
)


def rewriter_fingerprint(kind: str, **answer_changing: Any) -> str:
    """A short hash of what changes a rewriter's rewrites (kind, model, prompt, function, version), never of
    headers: they hold the secrets, and a new key rewrites nothing differently."""
    identity = json.dumps({"rewriter": kind, **answer_changing}, sort_keys=True, default=str)
    return hashlib.sha256(identity.encode()).hexdigest()[:FINGERPRINT_CHARS]


def rewrite_key(history: ChatMessages, utterance: str) -> str:
    """What a rewrite is cached by besides the fingerprint: a hash of the conversation and the utterance."""
    identity = json.dumps([[dict(message) for message in history], utterance], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()


def transcript(history: ChatMessages) -> str:
    """The conversation as a prompt shows it: one `user: ...` or `assistant: ...` line per message."""
    return "\n".join(f"{message['role']}: {message['content']}" for message in history)
