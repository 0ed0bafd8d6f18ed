"""The per-question rows of a run's `--json` document, as plain dicts or as their JSON text.

Both come from the run's columns a column at a time, in one order of keys: no object per question is
built on the way. The dicts are what a library caller and an indented document get; the text is what
`run --json` pipes, where a run of 20,000 questions spent more time making and encoding dicts of ids
than in any other step after the run file's parse. The text is the dicts' `json.dumps` to the byte.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from retrieval_pipeline.core.base.arrow_arrays import python_values
from retrieval_pipeline.core.base.json_text import ENCODER, json_float_objects, json_floats, json_string_lists, json_strings
from retrieval_pipeline.core.scoring.measures import TESTED

if TYPE_CHECKING:
    import numpy as np

    from retrieval_pipeline.core.scoring.results import RunResult

LABELLED_IDS = ("expected_document_ids", "retrieved_document_ids", "rejected_document_ids")
_BOOLEANS = {True: "true", False: "false", None: "null"}


class QuestionRows:
    """One row per question of `run` (those at `positions`, else all). `unjudged_document_ids` are the ids
    in its top D (the deepest cut-off) that are neither expected nor rejected: what to judge before
    trusting a miss. `query` is the text the question was asked with when it was not its own (a turn asked
    with its history or a rewrite: query_modes.py), else null."""

    def __init__(self, run: RunResult, positions: Sequence[int] | None = None):
        self._columns = run.questions if positions is None else run.questions.take(positions)
        self._cutoffs = run.cutoffs

    @property
    def keys(self) -> tuple[str, ...]:
        return (
            "id",
            "form",
            "hard_class",
            *LABELLED_IDS,
            "unjudged_document_ids",
            *(f"{figure.key}_hit" for figure in TESTED),
            "metrics",
            "latency_ms",
            "error",
            "query",
        )

    def __iter__(self) -> Iterator[dict[str, Any]]:
        keys = self.keys
        return (dict(zip(keys, row)) for row in zip(*self._cells(as_json=False)))

    def json_texts(self) -> Iterator[str]:
        """Each row as compact JSON (`json.dumps` with ensure_ascii and allow_nan off)."""
        template = "{" + ", ".join(f"{ENCODER.encode(key).replace('%', '%%')}: %s" for key in self.keys) + "}"
        return (template % row for row in zip(*self._cells(as_json=True)))

    def _cells(self, as_json: bool) -> list[list]:
        """The rows' values, a list per key in `keys` order; JSON text when `as_json`."""
        columns = self._columns
        strings = (lambda name: json_strings(columns.column(name))) if as_json else columns.values
        id_lists = (lambda name: json_string_lists(columns.column(name))) if as_json else columns.values
        deepest = self._cutoffs[-1]
        unjudged = json_string_lists(columns.unjudged_column(deepest)) if as_json else columns.unjudged_ids(deepest)
        hits = [python_values(columns.hit_column(figure.k)) for figure in TESTED]
        metrics = columns.metrics(self._cutoffs)
        return [
            strings("question_id"),
            strings("form"),
            strings("hard_class"),
            *(id_lists(name) for name in LABELLED_IDS),
            unjudged,
            *(([_BOOLEANS[hit] for hit in column] for column in hits) if as_json else hits),
            json_float_objects(metrics, columns.answered) if as_json else _metric_dicts(metrics, columns.values("error")),
            json_floats(columns.column("latency_ms")) if as_json else columns.values("latency_ms"),
            strings("error"),
            strings("query"),
        ]


def _metric_dicts(metrics: Mapping[str, np.ndarray], errors: list[str | None]) -> list[dict[str, float] | None]:
    """None for an errored question, whose scores mean nothing."""
    names = list(metrics)
    scores = zip(*(values.tolist() for values in metrics.values()))
    return [None if error is not None else dict(zip(names, row)) for error, row in zip(errors, scores)]
