"""Fingerprints of golden questions and sets: what a stored run was measured against.

A question's fingerprint covers everything that decides whether a ranking hits it: its text, its
expected ids (as a set: listing the same answers in another order is no edit), its form and its hard
class, and its rejected ids (as a set) when it has any: a question without them keeps the fingerprint it
had before rejected ids existed, so stored runs stay comparable. The answer gist documents the label and is never scored, so editing it is no edit either.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

FINGERPRINT_LENGTH = 16
"""Hex digits kept of the sha256: 64 bits, no accidental collision within a set and its history."""
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
"""Built once: a set of 20,000 questions is fingerprinted in 20,000 calls."""


def _digest(value: object) -> str:
    return hashlib.sha256(_CANONICAL.encode(value).encode("utf-8")).hexdigest()[:FINGERPRINT_LENGTH]


def question_fingerprint(
    text: str,
    expected_document_ids: Iterable[str],
    form: str,
    hard_class: str | None,
    rejected_document_ids: Iterable[str] = (),
) -> str:
    labels = {"question": text, "expected_document_ids": sorted(expected_document_ids), "form": form, "hard_class": hard_class}
    rejected = sorted(rejected_document_ids)
    return _digest({**labels, "rejected_document_ids": rejected} if rejected else labels)


def set_fingerprint(question_fingerprints: Iterable[tuple[str, str | None]]) -> str | None:
    """Over (question id, fingerprint) pairs sorted by id, so reordering a set is no edit. None when a
    question has no fingerprint (a run stored before fingerprints existed)."""
    pairs = sorted(question_fingerprints)
    return None if any(fingerprint is None for _, fingerprint in pairs) else _digest(pairs)
