"""The fields of one question of a run, and their Arrow types: the columns a run is stored and scored as."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

FIELDS = (
    "question_id",
    "form",
    "hard_class",
    "expected_document_ids",
    "retrieved_document_ids",
    "latency_ms",
    "error",
    "fingerprint",
    "rejected_document_ids",
    "machine_judged_document_ids",
    "conversation",
    "turn",
    "query",
)
"""`fingerprint` is None in runs stored before fingerprints existed (see fingerprints.py); the rejected ids
(judged not to answer) are empty in runs stored before they existed, and default to empty in `of`; so do
the ids a machine judge labelled (yes or no; machine_labels.py), which judged@k leaves out and
judged_any@k counts. `conversation` and `turn` place a conversation's turn (null for a single question, and
in runs stored before conversations existed): the figures by turn depth are read from them. `query` is the
text the question was asked with when it was not the question's own (a turn asked with its history or a
rewrite, query_modes.py; null otherwise, and in runs stored before query modes existed)."""


def question_schema() -> pa.Schema:
    import pyarrow as pa

    text, ids = pa.string(), pa.list_(pa.string())
    types = (text, text, text, ids, ids, pa.float64(), text, text, ids, ids, text, pa.int64(), text)
    return pa.schema(list(zip(FIELDS, types)))
