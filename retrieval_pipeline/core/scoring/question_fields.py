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
)
"""`fingerprint` is None in runs stored before fingerprints existed (see fingerprints.py); the rejected ids
(judged not to answer) are empty in runs stored before they existed, and default to empty in `of`; so do
the ids a machine judge labelled (yes or no; machine_labels.py), which judged@k leaves out and
judged_any@k counts."""


def question_schema() -> pa.Schema:
    import pyarrow as pa

    ids = pa.list_(pa.string())
    types = (pa.string(), pa.string(), pa.string(), ids, ids, pa.float64(), pa.string(), pa.string(), ids, ids)
    return pa.schema(list(zip(FIELDS, types)))
