"""The `accept_baseline` job: accepting a run as the baseline from the Dagster UI, the same core function
as `retrieval-eval accept` (under `baseline_policy: accepted` a failed check keeps failing until a
person accepts the new level; docs/dagster.md). No `from __future__ import annotations` here: Dagster
reads the op's config class from its annotation.
"""

from dagster import Config, MetadataValue, OpExecutionContext, Output, job, op
from pydantic import Field

from retrieval_pipeline.core.services.evaluation.baselines import accept_run
from retrieval_pipeline.core.storage.store import HistoryKey
from retrieval_pipeline.dagster_layer.names import Names

ACCEPT_JOB = "accept_baseline"


class AcceptanceConfig(Config):
    set: str = Field(description="The question set identifier, e.g. support.faq")
    retriever: str = Field(description="The retriever identifier, e.g. bm25")
    run_id: str = Field(description="The stored run to accept (the evaluation's `run_id` metadata)")
    accepted_by: str | None = Field(default=None, description="Who accepts; default: the Dagster run that did it")


def build_accept_baseline(names: Names):
    @op(
        name=names.name("accept_stored_run"),  # an op's name is unique in a code location, as a job's is
        description="Record the acceptance of a stored complete run in the result store (append-only).",
        required_resource_keys={names.resource},
    )
    def accept_stored_run(context: OpExecutionContext, config: AcceptanceConfig) -> Output[str]:
        store = names.project(context).store()
        by = config.accepted_by or f"dagster run {context.run_id}"
        acceptance = accept_run(store, HistoryKey(config.set, config.retriever), config.run_id, by)
        context.log.info(f"Accepted run {acceptance.run_id} of {config.set} × {config.retriever} by {by}")
        return Output(
            acceptance.run_id,
            metadata={
                "run_id": MetadataValue.text(acceptance.run_id),
                "accepted_by": MetadataValue.text(by),
                "accepted_at": MetadataValue.text(acceptance.accepted_at.isoformat()),
            },
        )

    @job(
        name=names.name(ACCEPT_JOB),
        description="Accept a stored run as the baseline of its set and retriever (baseline_policy: accepted).",
    )
    def accept_baseline() -> None:
        accept_stored_run()

    return accept_baseline
