"""Which traffic weighs a set's questions: the log named by `--traffic` or the set's `traffic:` entry,
assigned to the questions by the coverage service (coverage.assigned_traffic).

Every command that shows traffic-weighted figures (`run`, `compare`, `report`, `nightly`) and the Dagster
evaluation asset ask here, so a log is read and assigned by the same rules everywhere; no log named, no
log read, and every output stays as without traffic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrieval_pipeline.core.base.durable import file_sha256
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.scoring.traffic import TrafficWeights
from retrieval_pipeline.core.services.traffic.coverage import assigned_traffic

if TYPE_CHECKING:
    from retrieval_pipeline.core.services.configuration.project import ProjectConfig

FINGERPRINT_DIGITS = 16


def set_traffic(project: ProjectConfig, question_set: GoldenQuestionSet, log: str | None = None) -> TrafficWeights | None:
    """The traffic of `log` (else of the log the set's entry names) on each question of the set; None when
    neither names one. The fingerprint is the log file's checksum, so a stored run says which version of
    the log weighed it."""
    name = log or project.set_traffic(question_set.identifier)
    if name is None:
        return None
    _, path = project.query_log(name)
    assignment = assigned_traffic(project, question_set, name)
    return TrafficWeights(name, assignment.by_question, f"sha256:{file_sha256(path)[:FINGERPRINT_DIGITS]}")
