"""One question of a run: a view of its row of the run's columns (question_columns.py), read when asked.

Kept apart from the columns because callers that walk questions one by one (tables, audits, tests
building small runs) see only this face, while scoring works on the columns whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_pipeline.core.scoring.question_columns import FIELDS, QuestionColumns


class QuestionResult:
    """What one question got back: its row of a run's columns, read when asked.

    Hits are derived from the ids, never stored apart from them. An errored question (the retriever
    failed after its retries) has no hits at all: it is neither a hit nor a miss, and its run is
    incomplete. Built from values, a QuestionResult is the one question of a run of one.
    """

    __slots__ = ("_columns", "_row")

    def __init__(
        self,
        question_id: str,
        form: str,
        hard_class: str | None,
        expected_document_ids: Sequence[str],
        retrieved_document_ids: Sequence[str],
        latency_ms: float,
        error: str | None = None,
        fingerprint: str | None = None,
        rejected_document_ids: Sequence[str] = (),
        machine_judged_document_ids: Sequence[str] = (),
    ):
        values = (
            question_id,
            form,
            hard_class,
            expected_document_ids,
            retrieved_document_ids,
            latency_ms,
            error,
            fingerprint,
            rejected_document_ids,
            machine_judged_document_ids,
        )
        self._columns = QuestionColumns.of(**{name: [value] for name, value in zip(FIELDS, values)})
        self._row = 0

    @classmethod
    def view(cls, columns: QuestionColumns, row: int) -> QuestionResult:
        result = cls.__new__(cls)
        result._columns, result._row = columns, row
        return result

    def _value(self, name: str):
        return self._columns.values(name)[self._row]

    question_id = property(lambda self: self._value("question_id"))
    form = property(lambda self: self._value("form"))
    hard_class = property(lambda self: self._value("hard_class"))
    expected_document_ids = property(lambda self: self._value("expected_document_ids"))
    retrieved_document_ids = property(lambda self: self._value("retrieved_document_ids"))
    latency_ms = property(lambda self: self._value("latency_ms"))
    error = property(lambda self: self._value("error"))
    fingerprint = property(lambda self: self._value("fingerprint"))
    rejected_document_ids = property(lambda self: self._value("rejected_document_ids"))
    machine_judged_document_ids = property(lambda self: self._value("machine_judged_document_ids"))

    def unjudged_document_ids(self, k: int) -> tuple[str, ...]:
        return self._columns.unjudged_ids(k)[self._row]

    @property
    def first_hit_rank(self) -> int | None:
        """The 1-based distinct rank from which the question is a hit at every cut-off, None if at none."""
        return int(self._columns.first_hit_ranks[self._row]) or None

    def hit_at(self, k: int) -> bool | None:
        if self.error is not None:
            return None
        return self.first_hit_rank is not None and self.first_hit_rank <= k

    def _fields(self) -> tuple:
        return tuple(self._value(name) for name in FIELDS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QuestionResult) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return "QuestionResult(" + ", ".join(f"{name}={value!r}" for name, value in zip(FIELDS, self._fields())) + ")"
