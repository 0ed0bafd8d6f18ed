"""Fingerprints of golden questions and sets: what a stored run was measured against.

A question's fingerprint covers everything that decides whether a ranking hits it: its text, its
expected ids (as a set: listing the same answers in another order is no edit), its form and its hard
class, and its rejected ids (as a set) when it has any: a question without them keeps the fingerprint it
had before rejected ids existed, so stored runs stay comparable. The answer gist documents the label and is never scored, so editing it is no edit either.
A turn of a conversation may be asked with what came before it, its reply or its rewrite (query modes
read them), so its fingerprint also covers its context (`GoldenQuestionSet.turn_context`: the earlier
turns' utterances and replies, then its own reply and rewrite); a single question keeps the fingerprint it
always had.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from json.encoder import encode_basestring

FINGERPRINT_LENGTH = 16
"""Hex digits kept of the sha256: 64 bits, no accidental collision within a set and its history."""
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
"""Built once: the canonical JSON a fingerprint digests (keys sorted, no spaces, text as is)."""


def _digest(value: object) -> str:
    return _sha(_CANONICAL.encode(value))


def _sha(canonical: str) -> str:
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:FINGERPRINT_LENGTH]


def question_fingerprint(
    text: str,
    expected_document_ids: Iterable[str],
    form: str,
    hard_class: str | None,
    rejected_document_ids: Iterable[str] = (),
    *,
    context: str | None = None,
) -> str:
    """The `_CANONICAL` text of {[context (a turn's, turn_contexts), ]expected_document_ids, form, hard_class, question[,
    rejected_document_ids]} laid out in key order here rather than by the encoder: a run fingerprints every
    question of its set, and the encoder's per-call set-up was half the cost (a test pins the two texts equal)."""
    rejected = sorted(rejected_document_ids)
    return _sha(
        (f'{{"context":"{context}",' if context is not None else "{")
        + f'"expected_document_ids":{_strings(sorted(expected_document_ids))},"form":{encode_basestring(form)},'
        f'"hard_class":{"null" if hard_class is None else encode_basestring(hard_class)},"question":{encode_basestring(text)}'
        + (f',"rejected_document_ids":{_strings(rejected)}' if rejected else "")
        + "}"
    )


def turn_contexts(conversations: Iterable[Sequence]) -> dict[str, str]:
    """Each turn's context (see the module's docstring), keyed by its id, as the digest of its `_CANONICAL`
    text: a list of the earlier turns' [utterance, reply] pairs, then its own [reply, rewrite]. Each
    conversation's turns are read once, each turn's text grown from the one before it; the digest keeps a
    deep turn's fingerprint as cheap as a single question's."""
    contexts: dict[str, str] = {}
    for turns in conversations:
        earlier = ""
        for question in turns:
            turn = question.turn
            contexts[question.id] = _sha(f"[{earlier}{_CANONICAL.encode([turn.reply, turn.rewrite])}]")
            earlier += _CANONICAL.encode([question.question, turn.reply]) + ","
    return contexts


def _strings(values: list[str]) -> str:
    return f"[{','.join(map(encode_basestring, values))}]"


def set_fingerprint(question_fingerprints: Iterable[tuple[str, str | None]]) -> str | None:
    """Over (question id, fingerprint) pairs sorted by id, so reordering a set is no edit. None when a
    question has no fingerprint (a run stored before fingerprints existed)."""
    pairs = sorted(question_fingerprints)
    return None if any(fingerprint is None for _, fingerprint in pairs) else _digest(pairs)
