"""A run's questions as columns: the one model of what each question got back.

The questions live in one Arrow table, a column per field, and every hit, rank and metric is computed
on the columns at once (scoring.py, ranking_metrics.py). Whatever asks for one question gets a
`QuestionResult`, a view of its row read when asked: a large run builds no object per question unless
something walks them, and what is written to Parquet is the table itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, overload

from retrieval_pipeline.core.base.arrow_arrays import (
    from_numpy,
    from_python,
    indices,
    list_array,
    numbers,
    present,
    python_values,
)
from retrieval_pipeline.core.scoring.measures import question_scores, ranking_figures
from retrieval_pipeline.core.scoring.question_fields import FIELDS, question_schema
from retrieval_pipeline.core.scoring.scoring import Relevance

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa


class QuestionColumns(Sequence["QuestionResult"]):
    """The questions of one run, in set order; a sequence of `QuestionResult` views."""

    def __init__(self, table: pa.Table):
        """`table` holds the FIELDS, in order, of the types `question_schema` gives (ValueError otherwise)."""
        schema = question_schema()
        if not table.schema.equals(schema):
            raise ValueError(f"question columns must be {schema.names} of types {schema.types}, got {table.schema}")
        self.table = table.combine_chunks()

    @classmethod
    def of(cls, **columns: Any) -> QuestionColumns:
        """One value per question for every field: Arrow arrays are kept, numpy arrays and Python sequences converted."""
        import numpy as np
        import pyarrow as pa

        schema = question_schema()
        count = len(columns["question_id"])
        columns = {
            "rejected_document_ids": [()] * count,
            "machine_judged_document_ids": [()] * count,
            "conversation": [None] * count,
            "turn": [None] * count,
            "query": [None] * count,
            **columns,
        }
        arrays = []
        for field in schema:
            values = columns[field.name]
            if isinstance(values, np.ndarray):
                values = from_numpy(values, type=field.type)
            arrays.append(values if isinstance(values, pa.Array) else from_python(list(values), field.type))
        return cls(pa.Table.from_arrays(arrays, schema=schema))

    @classmethod
    def from_results(cls, questions: Iterable[QuestionResult]) -> QuestionColumns:
        """Questions gathered one by one (possibly from several runs) as one run's columns."""
        questions = list(questions)
        return cls.of(**{name: [getattr(question, name) for question in questions] for name in FIELDS})

    def __len__(self) -> int:
        return self.table.num_rows

    @overload
    def __getitem__(self, index: int) -> QuestionResult: ...
    @overload
    def __getitem__(self, index: slice) -> QuestionColumns: ...
    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.take(range(len(self))[index])

        return QuestionResult.view(self, range(len(self))[index])

    def __iter__(self) -> Iterator[QuestionResult]:

        return (QuestionResult.view(self, position) for position in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QuestionColumns) and self.table.equals(other.table)

    def __hash__(self) -> int:
        return hash((len(self), tuple(self.ids[:1])))

    def __repr__(self) -> str:
        return f"QuestionColumns({len(self)} questions)"

    def take(self, positions: Iterable[int]) -> QuestionColumns:
        """These questions, in this order."""
        import numpy as np

        return QuestionColumns(self.table.take(indices(np.fromiter(positions, np.int64))))

    def column(self, name: str) -> pa.Array:
        return self.table.column(name).combine_chunks()

    def values(self, name: str) -> list:
        """A column as Python values, read once (id lists as tuples)."""
        cache = self.__dict__.setdefault("_values", {})
        if name not in cache:
            cache[name] = python_values(self.table.column(name))
        return cache[name]

    @property
    def ids(self) -> list[str]:
        return self.values("question_id")

    @cached_property
    def positions(self) -> dict[str, int]:
        """Where each question id is."""
        return {question_id: position for position, question_id in enumerate(self.ids)}

    @cached_property
    def answered(self) -> np.ndarray:
        """False for a question the retriever failed on: it has no hits at all."""
        return ~present(self.table.column("error"))

    @cached_property
    def relevance(self) -> Relevance:
        return Relevance.of(
            self.column("retrieved_document_ids"),
            self.column("expected_document_ids"),
            self.column("rejected_document_ids"),
            self.column("machine_judged_document_ids"),
        )

    @cached_property
    def first_hit_ranks(self) -> np.ndarray:
        """Computed once: every count, breakdown and table asks for hits again; 0 where no cut-off hits."""
        return self.relevance.first_hit_ranks()

    def hits(self, k: int) -> np.ndarray:
        """Whether each question is a hit at `k` (an errored question is not)."""
        ranks = self.first_hit_ranks
        return self.answered & (ranks > 0) & (ranks <= k)

    def hit_column(self, k: int) -> pa.Array:
        """Hits at `k` as a boolean column, null for an errored question (neither hit nor miss)."""
        return from_numpy(self.hits(k), self.answered)

    def metrics(self, cutoffs: Sequence[int]) -> Mapping[str, np.ndarray]:
        """Each question's score on every declared ranking measure, one array per key (`mrr@10`, ...;
        meaningless where not `answered`)."""
        figures = ranking_figures(cutoffs)
        cache = self.__dict__.setdefault("_metrics", {})
        signature = (tuple(cutoffs), tuple(figure.key for figure in figures))
        if signature not in cache:
            cache[signature] = question_scores(self.relevance, cutoffs, figures)
        return cache[signature]

    def unjudged_ids(self, k: int) -> list[tuple[str, ...]]:
        """Each question's documents in its top `k` that nobody judged (neither expected nor rejected): what
        a person should look at before trusting a miss. Read once per cut-off: a table asks row by row."""
        cache = self.__dict__.setdefault("_unjudged", {})
        if k not in cache:
            cache[k] = python_values(self.unjudged_column(k))
        return cache[k]

    def unjudged_column(self, k: int) -> pa.ListArray:
        """Picked from the rankings' ids all at once: a run of 20,000 questions takes no Python step per question."""
        import numpy as np
        import pyarrow.compute as pc

        rankings = self.column("retrieved_document_ids")
        parents, lengths = numbers(pc.list_parent_indices(rankings)), self.relevance.retrieved
        ranks = np.arange(len(parents)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        kept = np.flatnonzero(ranks < k)
        kept = kept[~self.relevance.judged[parents[kept], ranks[kept]]]
        offsets = np.concatenate(([0], np.cumsum(np.bincount(parents[kept], minlength=len(rankings)))))
        return list_array(offsets, pc.list_flatten(rankings).take(indices(kept)))

    def groups(self, name: str) -> tuple[list[str], np.ndarray]:
        """The keys of a label column in first-seen order, and each question's key number (-1: none)."""
        import numpy as np

        encoded = self.column(name).dictionary_encode()
        return encoded.dictionary.to_pylist(), np.where(present(encoded.indices), numbers(encoded.indices), -1).astype(np.int64)


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
        conversation: str | None = None,
        turn: int | None = None,
        query: str | None = None,
    ):
        values = {
            "question_id": question_id,
            "form": form,
            "hard_class": hard_class,
            "expected_document_ids": expected_document_ids,
            "retrieved_document_ids": retrieved_document_ids,
            "latency_ms": latency_ms,
            "error": error,
            "fingerprint": fingerprint,
            "rejected_document_ids": rejected_document_ids,
            "machine_judged_document_ids": machine_judged_document_ids,
            "conversation": conversation,
            "turn": turn,
            "query": query,
        }
        self._columns = QuestionColumns.of(**{name: [value] for name, value in values.items()})
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
    conversation = property(lambda self: self._value("conversation"))
    turn = property(lambda self: self._value("turn"))
    query = property(lambda self: self._value("query"))

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
