"""Where a generated candidate question came from: what wrote it, from what, and what it was asked for.

`retrieval-eval generate` writes it into every judging-file row of the candidate (the `COLUMNS` below),
so the question keeps it through judging; a confirmed candidate becomes a question marked generated with
it (`GoldenQuestion.generated`), which is how an evaluation tells the generated questions from the human
ones. A candidate comes from an uncovered cluster of a query log (its rank in the coverage report and its
traffic, never its queries' texts) or from a document no question expects; either way its source
document is the answer it is presumed to have.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from retrieval_pipeline.core.golden.forms import QuestionForm

SOURCES = ("cluster", "document")
COLUMNS = (
    "generated_by",
    "generated_from",
    "source_document_id",
    "asked_form",
    "cluster_log",
    "cluster_rank",
    "cluster_traffic",
)
"""The judging-file columns of a candidate's provenance; none is `source_log`, which marks the sampled
queries of `coverage --sample` (new_questions.py), so `judge apply` never takes a candidate for one."""
GENERATED_SUFFIX = ".generated"


def generated_set_identifier(identifier: str) -> str:
    """The derived set a set's generated questions are stored under, apart from its own runs: a name no
    configured set may take (`question_sets.build_question_set_registry` refuses it)."""
    return identifier + GENERATED_SUFFIX


class GeneratedProvenance(BaseModel):
    """`generated_by` is `NAME@FINGERPRINT`; a `cluster` source names its log, its rank (1 = the most
    traffic) and its traffic, a `document` source none of them. Held by a set file's question as its
    `generated` mapping, so its field names are the file's keys."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    generated_by: str
    source: str
    document_id: str
    asked_form: str
    log: str | None = None
    cluster: int | None = None
    traffic: int | None = None

    @model_validator(mode="after")
    def _consistent(self) -> GeneratedProvenance:
        problem = self._problem()
        if problem:
            raise ValueError(problem)
        return self

    def _problem(self) -> str | None:
        name, at, fingerprint = self.generated_by.rpartition("@")
        if not (name and at and fingerprint):
            return f"generated_by is NAME@FINGERPRINT, not {self.generated_by!r}"
        if self.source not in SOURCES:
            return f"the source is one of {', '.join(SOURCES)}, not {self.source!r}"
        if not self.document_id:
            return "the source document is missing"
        if self.asked_form not in {form.value for form in QuestionForm}:
            return f"the asked form is match or gap, not {self.asked_form!r}"
        cluster_fields = (self.log, self.cluster, self.traffic)
        if self.source == "document":
            return "a document source has no log, cluster or traffic" if any(v is not None for v in cluster_fields) else None
        if not self.log or not _positive(self.cluster) or not _positive(self.traffic):
            return "a cluster source names its log, its rank and its traffic (whole numbers of at least 1)"
        return None

    def columns(self) -> dict[str, Any]:
        """The candidate's judging-file cells (empty where the source has no such thing)."""
        values = (getattr(self, field) for field in type(self).model_fields)
        return {name: "" if value is None else value for name, value in zip(COLUMNS, values)}

    @classmethod
    def from_columns(cls, row: dict[str, Any]) -> GeneratedProvenance:
        """Read back from a judging-file row (a CSV holds every cell as text, empty where unset)."""
        return cls(**{field: row[name] for field, name in zip(cls.model_fields, COLUMNS) if row.get(name) not in (None, "")})


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
